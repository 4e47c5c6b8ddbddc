# The source of the catalog code node "Double" (catalog-code.yaml registers it in the organization's catalog).
def main(inputs):
    return {"total": inputs["count"] * 2}
