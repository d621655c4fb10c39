// Just enough XML for the S3 wire format: a tiny builder for answers and a
// tolerant reader for the two request bodies we accept (CompleteMultipartUpload
// and Delete). No dependency, no DOM: these documents are flat and small.

import { s3err } from './errors.js';

export const S3_NS = 'http://s3.amazonaws.com/doc/2006-03-01/';

export function escapeXml(s: string): string {
  return s.replace(/[&<>"'\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, (c) => {
    switch (c) {
      case '&': return '&amp;';
      case '<': return '&lt;';
      case '>': return '&gt;';
      case '"': return '&quot;';
      case "'": return '&apos;';
      default: return `&#x${c.charCodeAt(0).toString(16)};`;
    }
  });
}

/** A node: [name, text | children]. Undefined children are skipped (optional fields). */
export type XmlNode = [string, string | number | boolean | XmlNode[]];
export type XmlChild = XmlNode | undefined | false;

export function el(name: string, content: string | number | boolean | XmlChild[]): XmlNode {
  if (Array.isArray(content)) return [name, content.filter((c): c is XmlNode => !!c)];
  return [name, content];
}

function render(node: XmlNode, out: string[]): void {
  const [name, content] = node;
  if (Array.isArray(content)) {
    out.push(`<${name}>`);
    for (const child of content) render(child, out);
    out.push(`</${name}>`);
  } else {
    out.push(`<${name}>${escapeXml(String(content))}</${name}>`);
  }
}

/** A full document whose root carries the S3 namespace. */
export function xmlDocument(root: string, children: XmlChild[], namespaced = true): string {
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>\n'];
  out.push(namespaced ? `<${root} xmlns="${S3_NS}">` : `<${root}>`);
  for (const child of children) if (child) render(child, out);
  out.push(`</${root}>`);
  return out.join('');
}

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#[0-9]+|amp|lt|gt|quot|apos);/g, (_, e: string) => {
    if (e === 'amp') return '&';
    if (e === 'lt') return '<';
    if (e === 'gt') return '>';
    if (e === 'quot') return '"';
    if (e === 'apos') return "'";
    const cp = e[1] === 'x' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
    return String.fromCodePoint(cp);
  });
}

/** Inner text of every `<tag>` (namespace prefixes ignored) within `xml`. */
function allTags(xml: string, tag: string): string[] {
  const re = new RegExp(`<(?:[\\w-]+:)?${tag}(?:\\s[^>]*)?>([\\s\\S]*?)</(?:[\\w-]+:)?${tag}>`, 'g');
  const found: string[] = [];
  for (const m of xml.matchAll(re)) found.push(m[1] ?? '');
  return found;
}

function oneTag(xml: string, tag: string): string | undefined {
  const v = allTags(xml, tag)[0];
  return v === undefined ? undefined : decodeEntities(v.trim());
}

function rootBody(xml: string, root: string): string {
  const body = allTags(xml.replace(/<\?xml[^>]*\?>/, ''), root)[0];
  if (body === undefined) throw s3err('MalformedXML');
  return body;
}

export interface CompletePart {
  partNumber: number;
  etag: string;
}

export function parseCompleteMultipartUpload(xml: string): CompletePart[] {
  const body = rootBody(xml, 'CompleteMultipartUpload');
  const parts = allTags(body, 'Part').map((p) => {
    const num = oneTag(p, 'PartNumber');
    const etag = oneTag(p, 'ETag');
    if (num === undefined || !/^\d{1,5}$/.test(num) || etag === undefined) throw s3err('MalformedXML');
    return { partNumber: Number(num), etag };
  });
  if (parts.length === 0) throw s3err('MalformedXML', 'You must specify at least one part');
  return parts;
}

export interface DeleteRequest {
  quiet: boolean;
  keys: string[];
}

export function parseDelete(xml: string): DeleteRequest {
  const body = rootBody(xml, 'Delete');
  const keys = allTags(body, 'Object').map((o) => {
    const key = oneTag(o, 'Key');
    if (key === undefined) throw s3err('MalformedXML');
    return key;
  });
  if (keys.length === 0 || keys.length > 1000) throw s3err('MalformedXML');
  return { quiet: oneTag(body, 'Quiet') === 'true', keys };
}
