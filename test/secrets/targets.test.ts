import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { bindSecrets, FORBIDDEN_TARGETS, forbiddenTargetReason } from '../../src/secrets/index.js';
import { binding, rejectsWith, removeTempDirs, storeOf, tempDir } from './secret-fixture.js';

after(removeTempDirs);

const VALUE = 'tok_forbiddenTargets_91c2e';

/** At least one name per family, plus case variants and family members the brief names. */
const FORBIDDEN: [string, string][] = [
  ['PATH', 'program lookup'],
  ['Path', 'program lookup'],
  ['path', 'program lookup'],
  ['PATHEXT', 'program lookup'],
  ['ComSpec', 'program lookup'],
  ['SHELL', 'program lookup'],
  ['LD_PRELOAD', 'dynamic loader'],
  ['LD_LIBRARY_PATH', 'dynamic loader'],
  ['LD_AUDIT', 'dynamic loader'],
  ['ld_preload', 'dynamic loader'],
  ['DYLD_INSERT_LIBRARIES', 'dynamic loader'],
  ['DYLD_LIBRARY_PATH', 'dynamic loader'],
  ['GCONV_PATH', 'dynamic loader'],
  ['BASH_ENV', 'shell startup'],
  ['BASH_FUNC_ls', 'shell startup'],
  ['ENV', 'shell startup'],
  ['IFS', 'shell startup'],
  ['PS4', 'shell startup'],
  ['PROMPT_COMMAND', 'shell startup'],
  ['SHELLOPTS', 'shell startup'],
  ['BASHOPTS', 'shell startup'],
  ['GLOBIGNORE', 'shell startup'],
  ['CDPATH', 'shell startup'],
  ['ZDOTDIR', 'shell startup'],
  ['NODE_OPTIONS', 'interpreter'],
  ['NODE_PATH', 'interpreter'],
  ['PYTHONPATH', 'interpreter'],
  ['PYTHONSTARTUP', 'interpreter'],
  ['PYTHONHOME', 'interpreter'],
  ['PYTHONBREAKPOINT', 'interpreter'],
  ['PERL5LIB', 'interpreter'],
  ['PERL5OPT', 'interpreter'],
  ['RUBYOPT', 'interpreter'],
  ['RUBYLIB', 'interpreter'],
  ['JAVA_TOOL_OPTIONS', 'interpreter'],
  ['_JAVA_OPTIONS', 'interpreter'],
  ['GIT_SSH_COMMAND', 'run a program'],
  ['GIT_EXEC_PATH', 'run a program'],
  ['GIT_CONFIG_GLOBAL', 'run a program'],
  ['GIT_CONFIG_KEY_0', 'run a program'],
  ['LESSOPEN', 'run a program'],
  ['EDITOR', 'run a program'],
  ['VISUAL', 'run a program'],
  ['PAGER', 'run a program'],
  ['npm_config_script_shell', 'run a program'],
  ['CC', 'run a program'],
  ['HOME', 'home, config'],
  ['TMPDIR', 'home, config'],
  ['XDG_CONFIG_HOME', 'home, config'],
  ['USERPROFILE', 'home, config'],
  ['SSL_CERT_FILE', 'TLS trust'],
  ['NODE_TLS_REJECT_UNAUTHORIZED', 'TLS trust'],
  ['SystemRoot', 'Windows system'],
  ['windir', 'Windows system'],
  ['SUPERVISOR_SPAWN_ID', 'the supervisor'],
  ['supervisor_anything', 'the supervisor'],
];

const INVALID = ['', '1ABC', 'GH-TOKEN', 'GH.TOKEN', 'GH TOKEN', 'A=B', 'X\0Y', 'É_TOKEN', 'A'.repeat(129)];

/** Credential-style names programs read as credentials, not as code or paths. */
const ALLOWED = ['GH_TOKEN', 'GITHUB_TOKEN', 'PGPASSWORD', 'NODE_AUTH_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'DATABASE_URL', 'HTTPS_PROXY', 'NPM_TOKEN', 'PATH_TOKEN', 'HOMEBREW_GITHUB_API_TOKEN', 'LDAP_PASSWORD', '_TOKEN'];

describe('forbidden binding targets', () => {
  it('refuses every family, case-insensitively, naming the family and its reason', () => {
    for (const [name, family] of FORBIDDEN) {
      const why = forbiddenTargetReason(name);
      assert.ok(why !== null, `${name} must be forbidden`);
      assert.ok(why.includes(family), `${name}: ${why} should name the family '${family}'`);
    }
    for (const f of FORBIDDEN_TARGETS) {
      assert.ok(f.reason.length > 40, `family ${f.family} has a written reason`);
      for (const n of f.names) assert.notEqual(forbiddenTargetReason(n), null, n);
      for (const p of f.prefixes) assert.notEqual(forbiddenTargetReason(`${p}X`), null, `${p}X`);
    }
  });

  it('refuses names that are not valid environment variable names', () => {
    for (const name of INVALID) assert.match(forbiddenTargetReason(name) ?? '', /not a valid environment variable name/, JSON.stringify(name));
  });

  it('accepts credential-style targets (so the checks above can fail)', () => {
    for (const name of ALLOWED) assert.equal(forbiddenTargetReason(name), null, name);
  });

  it('bindSecrets refuses each forbidden or invalid target before reading any value', async () => {
    const store = storeOf(tempDir(), { TOKEN: { env: 'SRC' } }, { SRC: VALUE });
    for (const name of [...FORBIDDEN.map(([n]) => n), ...INVALID]) {
      const err = await rejectsWith(bindSecrets(store, [binding('TOKEN', name)], { grants: ['secret:TOKEN'] }), 'secret.forbidden_target', [VALUE]);
      assert.equal(err.target, name);
    }
    // A forbidden target later in the list stops the whole set before the first value is read.
    await rejectsWith(bindSecrets(store, [binding('TOKEN', 'GH_TOKEN'), binding('TOKEN', 'LD_PRELOAD')], { grants: ['secret:TOKEN'] }), 'secret.forbidden_target');
    assert.equal(store.knownValues().length, 0);
    for (const name of ALLOWED) {
      const set = await bindSecrets(store, [binding('TOKEN', name)], { grants: ['secret:TOKEN'] });
      assert.equal(set.overlay.apply({})[name], VALUE, name);
    }
  });

  it('refuses a target bound twice, also when only the case differs', async () => {
    const store = storeOf(tempDir(), { A: { env: 'SA' }, B: { env: 'SB' } }, { SA: 'value-a-1234', SB: 'value-b-5678' });
    const grants = ['secret:A', 'secret:B'];
    await rejectsWith(bindSecrets(store, [binding('A', 'GH_TOKEN'), binding('B', 'GH_TOKEN')], { grants }), 'secret.duplicate_target', ['value-a-1234', 'value-b-5678']);
    await rejectsWith(bindSecrets(store, [binding('A', 'GH_TOKEN'), binding('B', 'gh_token')], { grants }), 'secret.duplicate_target');
    const set = await bindSecrets(store, [binding('A', 'GH_TOKEN'), binding('B', 'OTHER_TOKEN')], { grants });
    assert.deepEqual(set.overlay.targets, ['GH_TOKEN', 'OTHER_TOKEN']);
  });
});
