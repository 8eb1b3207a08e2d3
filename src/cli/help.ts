/**
 * The examples every `--help` (and `nodescope help CMD`) ends with, by command path; a
 * command without examples here fails test/unit/cli-help.test.ts, so a new command gets some.
 */
import type { Command } from 'commander';

/** Examples by command path (`''`: the program itself), each a command line. */
export const EXAMPLES: Readonly<Record<string, readonly string[]>> = {
  '': ['nodescope --replay fixtures/lab-iptables        # the TUI over a capture', 'nodescope --replay DIR --from client --to-service default/web:80   # open on that walk (Step pane)', 'nodescope --local                                # this machine, live (root)', 'nodescope --node worker-1 -n debug               # a node through a debug pod in namespace debug', 'nodescope show services -n kube-system            # a script-friendly table'],
  show: ['nodescope show                                    # list what can be shown', 'nodescope show services -o wide --replay DIR', 'nodescope show rules --service default/web -o yaml', 'nodescope show services -o name -A --api-file objects.json', 'nodescope show dns --service kube-system/kube-dns --node worker-1 --kubeconfig ~/.kube/prod'],
  diagnose: ['nodescope diagnose --replay DIR', 'nodescope diagnose -n shop -o json --node worker-1', 'nodescope diagnose --service default/web -o yaml', 'nodescope diagnose -n shop --node worker-1   # judged against every namespace, shop listed'],
  trace: ['nodescope trace --from 10.244.0.9 --to 10.96.12.34:80/tcp', 'nodescope trace --from web-5d9c7 --to-service default/web:80 --replay DIR   # a Pod by name, a Service by name', 'nodescope trace --entry host --to 10.96.0.10:53/udp -o yaml', 'nodescope trace --from 192.0.2.7 --entry external --to 192.168.49.2:30080/tcp --lang ja'],
  dig: ['nodescope dig kubernetes.default.svc.cluster.local --replay DIR', 'nodescope dig +search web.shop --type AAAA --node worker-1', 'nodescope dig kube-dns.kube-system -o json', 'nodescope dig kube-dns.kube-system --replay DIR --lang ja'],
  capture: ['nodescope capture --local -o /tmp/node-bundle', 'nodescope capture --node worker-1 -n debug -o bundles/worker-1 --note "after the upgrade"'],
  tour: ['nodescope tour                                    # list the tours', 'nodescope tour where-rewritten --lang ja'],
  fleet: ['nodescope fleet capture -o fleet/ --selector pool=web', 'nodescope fleet diagnose fleet/ -o json'],
  'fleet capture': ['nodescope fleet capture -o fleet/', 'nodescope fleet capture -o fleet/ --nodes worker-1,worker-2 --kubeconfig ~/.kube/prod', 'nodescope fleet capture -o fleet/ --ssh node-a,node-b --api-file objects.json'],
  'fleet diagnose': ['nodescope fleet diagnose fleet/', 'nodescope fleet diagnose fleet/ -o yaml', 'nodescope fleet diagnose fleet/ --lang ja'],
  help: ['nodescope help trace                               # trace\'s flags and examples', 'nodescope help dig'],
  completion: ['source <(nodescope completion bash)', 'nodescope completion zsh > ~/.zfunc/_nodescope', 'nodescope completion fish > ~/.config/fish/completions/nodescope.fish'],
  dash: ['nodescope dash --service default/web --local', 'nodescope dash --service default/web --replay DIR'],
  replay: ['nodescope replay fixtures/lab-nftables', 'nodescope replay DIR -n kube-system --lang ja'],
};

/** Adds an `Examples:` block to the help of `cmd` and of every command under it. */
export function addExamples(cmd: Command, path: readonly string[] = []): void {
  const examples = EXAMPLES[path.join(' ')];
  if (examples) cmd.addHelpText('after', `\nExamples:\n${examples.map((e) => `  ${e}`).join('\n')}\n`);
  for (const sub of cmd.commands) addExamples(sub, [...path, sub.name()]);
}
