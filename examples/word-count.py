def main(inputs):
    words = inputs["text"].split()
    return {"words": len(words), "longest": max(words, key=len) if words else ""}
