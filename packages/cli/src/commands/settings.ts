/** config (profiles) and completion. */
import type { Command } from 'commander';
import { readKeyFile, type Context } from '../context.js';
import { printJson, table, UsageError } from '../output.js';
import { readStdin } from '../prompt.js';
import { PROFILE_KEYS, type ProfileKey } from '../settings.js';

function profileKey(name: string): ProfileKey {
  if (!(PROFILE_KEYS as readonly string[]).includes(name)) throw new UsageError(`unknown setting ${name}; one of ${PROFILE_KEYS.join(', ')}`);
  return name as ProfileKey;
}

export function registerSettings(program: Command, ctx: () => Context): void {
  const config = program.command('config').description(`settings per profile (${PROFILE_KEYS.join(', ')}), kept in $XDG_CONFIG_HOME/recog-client`);
  config
    .command('set')
    .description('set a value; "-" reads it from stdin, --file from a file (api_key takes only these: never an argument)')
    .argument('<name>', PROFILE_KEYS.join(' | '))
    .argument('[value]', 'the value, or - for stdin (api_key: - only)')
    .option('--file <path>', 'read the value from this file')
    .action(async (name: string, value: string | undefined, opts: { file?: string }) => {
      const c = ctx();
      const key = profileKey(name);
      if (value !== undefined && opts.file !== undefined) throw new UsageError('give a value or --file, not both');
      if (key === 'api_key' && value !== undefined && value !== '-') {
        throw new UsageError(
          'config set api_key takes no key as an argument (it would land in shell history and ps); nothing was saved. ' +
            `Use: printf '%s' "$KEY" | recog-client config set api_key -   or: recog-client config set api_key --file PATH`,
        );
      }
      let v: string;
      if (opts.file !== undefined) v = await readKeyFile(opts.file, (m) => c.warn(m));
      else if (value === '-') v = (await readStdin()).trim();
      else if (value !== undefined) v = value;
      else throw new UsageError(`config set ${name} needs a value, - (stdin) or --file PATH`);
      if (!v) throw new UsageError('empty value');
      await c.settings.setProfileValue(key, v);
      process.stdout.write(`${name} set for profile ${c.settings.profile}\n`);
    });
  config
    .command('unset')
    .argument('<name>', PROFILE_KEYS.join(' | '))
    .action(async (name: string) => {
      const c = ctx();
      await c.settings.setProfileValue(profileKey(name), undefined);
    });
  config
    .command('list')
    .description('profiles and their settings (the API key masked)')
    .action(async () => {
      const c = ctx();
      const profiles = await c.settings.allProfiles();
      const masked = Object.fromEntries(
        Object.entries(profiles).map(([n, p]) => [n, { ...p, ...(p.api_key ? { api_key: `${p.api_key.slice(0, 8)}…` } : {}) }]),
      );
      if (c.json) return printJson(masked);
      const rows = Object.entries(masked).map(([n, p]) => [n, p.base_url ?? '-', p.org ?? '-', p.api_key ?? '-']);
      process.stdout.write(`${table(rows, ['PROFILE', 'BASE URL', 'ORG', 'API KEY'])}\n`);
    });

  program
    .command('completion')
    .description('print a shell completion script: eval "$(recog-client completion bash)"')
    .argument('<shell>', 'bash or zsh')
    .action((shell: string) => {
      if (shell !== 'bash' && shell !== 'zsh') throw new UsageError('completion is for bash or zsh');
      process.stdout.write(completionScript(program, shell));
    });
}

/** Built from the command tree itself, so it never goes stale. */
export function completionScript(program: Command, shell: 'bash' | 'zsh'): string {
  const names = (cmd: Command) => cmd.commands.map((c) => c.name());
  const flags = (cmd: Command) => cmd.options.map((o) => o.long).filter(Boolean) as string[];
  const cases = program.commands
    .map((c) => {
      const words = [...names(c), ...flags(c)].join(' ');
      return `    ${c.name()}) opts="${words}" ;;`;
    })
    .join('\n');
  const body = `_recog_client() {
  local cur=\${COMP_WORDS[COMP_CWORD]} sub=\${COMP_WORDS[1]} opts
  if [ "$COMP_CWORD" -eq 1 ]; then
    opts="${[...names(program), ...flags(program)].join(' ')}"
  else
    case "$sub" in
${cases}
    *) opts="" ;;
    esac
  fi
  COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
  [ \${#COMPREPLY[@]} -eq 0 ] && COMPREPLY=( $(compgen -f -- "$cur") )
}
complete -F _recog_client recog-client
`;
  return shell === 'zsh' ? `autoload -U +X bashcompinit && bashcompinit\n${body}` : body;
}

