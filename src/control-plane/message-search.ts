// The search index parts of a copied message (decision 127): wired to the supervisor's own
// tokenizer once the one query language for both engines lands (decision 128).
export function messageSearchDocuments(_content: string): string[] {
  return [];
}
