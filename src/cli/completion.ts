/**
 * `nodescope completion bash|zsh|fish`: shell completion scripts generated from the commander
 * command tree the parser itself uses (subcommands, their flags, the choices of a flag or of
 * a positional argument), so a new flag completes without a list kept by hand. bash: a
 * `complete -F` function over COMP_WORDS/COMP_CWORD (bash(1) "Programmable Completion");
 * zsh: the same function through zsh's bashcompinit; fish: `complete -c` lines (fish's
 * `complete` builtin, with `__fish_seen_subcommand_from`).
 */
import type { Command, Option } from 'commander';

/** The shells a script is generated for. */
export const COMPLETION_SHELLS = ['bash', 'zsh', 'fish'] as const;
export type CompletionShell = (typeof COMPLETION_SHELLS)[number];

/** One command of the tree as completion sees it. `path`: the words after the program name, e.g. `['fleet', 'capture']`. */
interface CommandSpec {
  readonly path: readonly string[];
  readonly description: string;
  readonly subcommands: readonly string[];
  /** Every spelling of every flag (`-o`, `--output`), `--help` included. */
  readonly flags: readonly string[];
  /** Flags that take a value → its choices (empty: any value, e.g. a file). */
  readonly values: ReadonlyMap<string, readonly string[]>;
  /** What the first positional argument can be (commander choices, or `positional` given). */
  readonly args: readonly string[];
  readonly options: readonly Option[];
}

/**
 * Choices of positional arguments commander does not know as choices (by command path, e.g.
 * `show`); `help` also makes commander's implicit help command complete (`help <TAB>`).
 */
export type PositionalChoices = Readonly<Record<string, readonly string[]>>;

function specsOf(cmd: Command, path: readonly string[], positional: PositionalChoices): CommandSpec[] {
  const visible = cmd.commands.filter((c) => !(c as unknown as { _hidden?: boolean })._hidden);
  const options = [...cmd.options.filter((o) => !o.hidden)];
  const flags = [...options.flatMap((o) => [o.short, o.long].filter((f): f is string => f !== undefined)), '--help', ...(path.length === 0 ? ['--version'] : [])];
  const values = new Map<string, readonly string[]>();
  for (const o of options) {
    if (!o.required && !o.optional) continue;
    for (const f of [o.short, o.long]) if (f) values.set(f, o.argChoices ?? []);
  }
  const first = cmd.registeredArguments[0];
  const args = positional[path.join(' ')] ?? first?.argChoices ?? [];
  // commander's own `help [command]` is not in `cmd.commands`: given its choices, it completes as a command of its own.
  const help = path.length === 0 && positional.help && !visible.some((c) => c.name() === 'help') ? [helpSpec(positional.help)] : [];
  const me: CommandSpec = { path, description: cmd.description(), subcommands: [...visible.map((c) => c.name()), ...help.map(() => 'help')], flags, values, args, options };
  return [me, ...visible.flatMap((c) => specsOf(c, [...path, c.name()], positional)), ...help];
}

/** `help CMD`: the command names as its argument. */
function helpSpec(names: readonly string[]): CommandSpec {
  return { path: ['help'], description: 'help for a command: what it does, its flags, examples', subcommands: [], flags: ['--help'], values: new Map(), args: names, options: [] };
}

/** Words as a shell single-quoted string's contents allow (our names and flags have no quote). */
const words = (list: readonly string[]) => list.join(' ');

function bashScript(specs: readonly CommandSpec[], program: string): string {
  const fn = `_${program.replace(/[^A-Za-z0-9_]/g, '_')}`;
  const paths = specs.filter((s) => s.path.length > 0).map((s) => `"${' ' + s.path.join(' ')}"`);
  const valueCases: string[] = [];
  for (const s of specs) {
    const key = ' ' + s.path.join(' ');
    for (const [flag, choices] of s.values) {
      valueCases.push(`      "${key.trimEnd()}|${flag}") ${choices.length ? `COMPREPLY=($(compgen -W '${words(choices)}' -- "$cur"))` : 'COMPREPLY=($(compgen -f -- "$cur"))'}; return 0;;`);
    }
  }
  const cmdCases = specs.map((s) => `      "${(' ' + s.path.join(' ')).trimEnd()}") words='${words([...s.subcommands, ...s.args])}'; flags='${words(s.flags)}';;`);
  return `# ${program} completion for bash: source it, or put it in ~/.local/share/bash-completion/completions/${program}
${fn}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="" path="" w i words="" flags=""
  (( COMP_CWORD > 0 )) && prev="\${COMP_WORDS[COMP_CWORD-1]}"
  for (( i = 1; i < COMP_CWORD; i++ )); do
    w="\${COMP_WORDS[i]}"
    case "$path $w" in
      ${paths.join('|')}) path="$path $w";;
    esac
  done
  case "$path|$prev" in
${valueCases.join('\n')}
  esac
  case "$path" in
${cmdCases.join('\n')}
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  else
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
  fi
  return 0
}
complete -o default -F ${fn} ${program}
`;
}

function zshScript(specs: readonly CommandSpec[], program: string): string {
  return `#compdef ${program}
# ${program} completion for zsh (through bashcompinit): source it from ~/.zshrc
autoload -U +X compinit && compinit
autoload -U +X bashcompinit && bashcompinit
${bashScript(specs, program)}`;
}

/** A fish single-quoted string (backslash and quote escaped). */
const fishQuote = (s: string) => `'${s.replace(/[\\']/g, (c) => `\\${c}`)}'`;

function fishScript(specs: readonly CommandSpec[], program: string): string {
  const lines = [`# ${program} completion for fish: put it in ~/.config/fish/completions/${program}.fish`, `complete -c ${program} -f`];
  for (const s of specs) {
    // Root: no subcommand yet; elsewhere: the command's last word seen (fleet's own subcommands after fleet).
    const when = s.path.length === 0 ? '__fish_use_subcommand' : `__fish_seen_subcommand_from ${s.path.at(-1)}`;
    for (const sub of s.subcommands) {
      const desc = specs.find((c) => c.path.length === s.path.length + 1 && c.path.at(-1) === sub)?.description ?? '';
      lines.push(`complete -c ${program} -n ${fishQuote(when)} -a ${sub} -d ${fishQuote(desc.split(/[.:(]/)[0]!.trim())}`);
    }
    if (s.args.length) lines.push(`complete -c ${program} -n ${fishQuote(when)} -a ${fishQuote(words(s.args))}`);
    for (const o of s.options) {
      const parts = [`complete -c ${program} -n ${fishQuote(when)}`];
      if (o.short) parts.push(`-s ${o.short.slice(1)}`);
      if (o.long) parts.push(`-l ${o.long.slice(2)}`);
      if (o.required || o.optional) parts.push(o.argChoices ? `-x -a ${fishQuote(words(o.argChoices))}` : '-r -F');
      parts.push(`-d ${fishQuote(o.description.split(/[.:(]/)[0]!.trim())}`);
      lines.push(parts.join(' '));
    }
  }
  return `${lines.join('\n')}\n`;
}

/** The completion script for `shell` of the command tree `program` (its own name: `program.name()`). */
export function completionScript(program: Command, shell: CompletionShell, positional: PositionalChoices = {}): string {
  const specs = specsOf(program, [], positional);
  if (shell === 'bash') return bashScript(specs, program.name());
  if (shell === 'zsh') return zshScript(specs, program.name());
  return fishScript(specs, program.name());
}
