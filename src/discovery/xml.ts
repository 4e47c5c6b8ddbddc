import { SaxesParser } from 'saxes';
import { DomainError } from '../errors.js';

/** One element of a parsed document: namespace-resolved name, attributes, children and its own text. */
export interface XmlElement {
  uri: string;
  local: string;
  /** Attributes without a namespace by local name; namespaced ones as `{uri}local`. */
  attributes: Record<string, string>;
  children: XmlElement[];
  /** The element's direct text, concatenated (CDATA included). */
  text: string;
}

/** Bounds on what one document may make us hold, whatever its byte size. */
const xmlLimits = { depth: 100, elements: 200_000 } as const;

class XmlRefused extends Error {}

/**
 * Parses untrusted XML into a tree. saxes is a non-validating, well-formedness
 * checking parser that never fetches anything and never expands entities a
 * document declares; on top of that any DOCTYPE is refused outright, so
 * external entities (XXE) and entity expansion (billion laughs) cannot occur.
 * Depth and element count are bounded. Failures are 400s naming line and column.
 */
export function parseXml(source: string): XmlElement {
  const parser = new SaxesParser({ xmlns: true, position: true });
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  let elements = 0;

  parser.on('doctype', () => {
    throw new XmlRefused('a DOCTYPE is not accepted (no DTDs, no entity declarations)');
  });
  parser.on('error', (err) => {
    // saxes prefixes its messages with line:column, which the 400 already names.
    throw new XmlRefused(err.message.replace(/^\d+:\d+: /, ''));
  });
  parser.on('opentag', (tag) => {
    elements += 1;
    if (elements > xmlLimits.elements) throw new XmlRefused(`more than ${xmlLimits.elements} elements`);
    if (stack.length >= xmlLimits.depth) throw new XmlRefused(`elements nested deeper than ${xmlLimits.depth}`);
    const attributes: Record<string, string> = {};
    for (const attribute of Object.values(tag.attributes)) {
      if (attribute.prefix === 'xmlns' || attribute.name === 'xmlns') continue;
      attributes[attribute.uri ? `{${attribute.uri}}${attribute.local}` : attribute.local] = attribute.value;
    }
    const element: XmlElement = { uri: tag.uri, local: tag.local, attributes, children: [], text: '' };
    const parent = stack[stack.length - 1];
    if (parent) parent.children.push(element);
    else root = element;
    stack.push(element);
  });
  parser.on('closetag', () => {
    stack.pop();
  });
  const appendText = (text: string) => {
    const current = stack[stack.length - 1];
    if (current) current.text += text;
  };
  parser.on('text', appendText);
  parser.on('cdata', appendText);

  try {
    parser.write(source).close();
  } catch (err) {
    if (!(err instanceof XmlRefused)) throw err;
    throw DomainError.badRequest(`Invalid XML at line ${parser.line}, column ${parser.column}: ${err.message}`, {
      line: parser.line,
      column: parser.column,
    });
  }
  if (!root) throw DomainError.badRequest('Invalid XML: no root element');
  return root;
}
