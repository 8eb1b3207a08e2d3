/**
 * `-n`/`-A` as one namespace choice (kubectl's rule: `-A` wins over `-n`). Apart from
 * src/sources/open.ts so that the command tree (src/cli/options.ts) reads it without loading
 * the sources, which load only when a command runs.
 */

/** The namespace `-n` asks for, unless `-A` asks for all; undefined means every namespace. */
export function namespaceOf(options: { readonly namespace?: string; readonly allNamespaces?: boolean }): string | undefined {
  return options.allNamespaces ? undefined : options.namespace;
}
