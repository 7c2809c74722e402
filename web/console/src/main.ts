/**
 * The console web app: hash routes, one page at a time, everything through the console
 * API. No framework: the DOM helper builds elements, text is never parsed as HTML.
 */
import {
  api, ApiFailure, BASE, completeMfa, currentUser, login, logout, publicCall, secondFactor, RANK, whenSignedOut, type Invitation, type InvitationInfo, type Key, type Me, type Body, type Ok, type Role, type Usage,
} from './api.js';
import { annotatedImage, gauge, legend, stackedDays } from './charts.js';
import { clear, fmtDate, fmtNum, h } from './dom.js';

const root = document.getElementById('app') as HTMLElement;
let me: Me | null = null;
/** The notice after inviting a member (the one-time link is shown once), for the re-rendered page. */
let memberNotice: HTMLElement | null = null;
/** The notice after a password change, for the re-rendered account page. */
let accountNotice: HTMLElement | null = null;
/** A panel to show on top of the next keys page (the new key's secret), then forgotten. */
let flash: ((page: { top: HTMLElement; revoke: (id: string) => void }) => HTMLElement) | null = null;

whenSignedOut(() => {
  me = null;
  location.hash = '#/login';
});

function go(hash: string): void {
  if (location.hash === hash) void render();
  else location.hash = hash;
}

function errorBox(err: unknown): HTMLElement {
  const msg = err instanceof ApiFailure ? `${err.message} (${err.code})` : String((err as Error)?.message ?? err);
  return h('div', { class: 'alert error', role: 'alert' }, msg);
}

function roleIn(org: string): Role | null {
  return me?.memberships.find((m) => m.org.name === org || m.org.id === org)?.role ?? null;
}
const can = (org: string, least: Role) => RANK[roleIn(org) ?? 'viewer'] >= RANK[least] && roleIn(org) !== null;

// ---------------------------------------------------------------- layout

function layout(org: string | null, active: string, content: HTMLElement): HTMLElement {
  const orgs = me?.memberships ?? [];
  const tabs: Array<[string, string, Role]> = [
    ['keys', 'API keys', 'viewer'],
    ['usage', 'Usage', 'viewer'],
    ['feedback', 'Feedback', 'viewer'],
    ['members', 'Members', 'viewer'],
    ['audit', 'Audit log', 'admin'],
    ['settings', 'Settings', 'viewer'],
  ];
  const select = h(
    'select',
    { 'aria-label': 'organisation', onchange: (e: Event) => go(`#/o/${encodeURIComponent((e.target as HTMLSelectElement).value)}/keys`) },
    orgs.map((m) => h('option', { value: m.org.name, selected: m.org.name === org }, m.org.name)),
  );
  return h(
    'div',
    { class: 'shell' },
    h(
      'header',
      {},
      h('a', { class: 'brand', href: org ? `#/o/${encodeURIComponent(org)}/keys` : '#/' }, 'Recognition console'),
      orgs.length > 0 ? select : null,
      h('span', { class: 'spacer' }),
      h('a', { href: '#/account', class: active === 'account' ? 'active' : '' }, me?.user.email ?? ''),
      h('button', { class: 'link', id: 'logout', onclick: async () => { await logout(); me = null; go('#/login'); } }, 'Sign out'),
    ),
    org
      ? h('nav', {}, tabs.filter(([, , least]) => can(org, least)).map(([id, label]) => h('a', { href: `#/o/${encodeURIComponent(org)}/${id}`, class: active === id ? 'active' : '' }, label)))
      : null,
    h('main', {}, content),
  );
}

// ---------------------------------------------------------------- login

function loginPage(): HTMLElement {
  const email = h('input', { type: 'email', name: 'email', autocomplete: 'username', required: true });
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'current-password', required: true });
  const msg = h('div');
  const form = h(
    'form',
    {
      class: 'card login',
      onsubmit: async (e: Event) => {
        e.preventDefault();
        clear(msg);
        try {
          const { mfaToken } = await login(email.value, password.value);
          if (mfaToken !== undefined) {
            form.replaceWith(mfaStep(mfaToken));
            return;
          }
          me = null;
          go('#/');
        } catch (err) {
          msg.append(errorBox(err));
        }
      },
    },
    h('h1', {}, 'Sign in'),
    h('label', {}, 'E-mail', email),
    h('label', {}, 'Password', password),
    msg,
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'),
  );
  return h('div', { class: 'center' }, form);
}

/** The second step of a sign-in with two-factor authentication: the code (or a recovery code). */
function mfaStep(mfaToken: string): HTMLElement {
  const code = h('input', { name: 'code', autocomplete: 'one-time-code', inputmode: 'text', required: true, maxlength: 40 });
  const msg = h('div');
  return h(
    'form',
    {
      class: 'card login',
      id: 'mfa-step',
      onsubmit: async (e: Event) => {
        e.preventDefault();
        clear(msg);
        try {
          await completeMfa(mfaToken, code.value);
          me = null;
          go('#/');
        } catch (err) {
          msg.append(errorBox(err));
        }
      },
    },
    h('h1', {}, 'Two-factor authentication'),
    h('p', { class: 'muted' }, 'Enter the 6-digit code of your authenticator app, or one of your recovery codes.'),
    h('label', {}, 'Code', code),
    msg,
    h('button', { type: 'submit', class: 'primary' }, 'Verify'),
    h('p', {}, h('a', { href: '#/login', onclick: () => location.reload() }, 'Start over')),
  );
}

/** Asks for a current code in a modal dialog; null when cancelled. */
function askCode(reason: string): Promise<string | null> {
  return new Promise((resolve) => {
    const code = h('input', { name: 'code', autocomplete: 'one-time-code', required: true, maxlength: 40 });
    const dialog = h('dialog', { id: 'mfa-recheck', class: 'card' });
    const done = (value: string | null) => {
      dialog.close();
      dialog.remove();
      resolve(value);
    };
    dialog.append(
      h('form', { class: 'form', onsubmit: (e: Event) => { e.preventDefault(); done(code.value); } },
        h('h2', {}, 'Confirm it is you'),
        h('p', { class: 'muted' }, reason),
        h('label', {}, 'Code from your authenticator app (or a recovery code)', code),
        h('button', { type: 'submit', class: 'primary' }, 'Confirm'), ' ',
        h('button', { type: 'button', onclick: () => done(null) }, 'Cancel'),
      ),
    );
    document.body.append(dialog);
    dialog.showModal();
    code.focus();
  });
}

/** Runs `call`; when the server wants a fresh second-factor check (MFA_CHECK_REQUIRED), asks for a code, checks it and runs `call` once more. */
async function withFreshMfa<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (!(err instanceof ApiFailure && err.code === 'MFA_CHECK_REQUIRED')) throw err;
    const typed = await askCode('Creating a key needs a code from your authenticator app (asked at most every 10 minutes).');
    if (typed === null) throw err;
    await api('POST', '/me/mfa/verify', secondFactor(typed) satisfies Body<'consoleVerifyMfa'>);
    return call();
  }
}

// ---------------------------------------------------------------- accepting an invitation (no session needed)

async function invitePage(token: string): Promise<HTMLElement> {
  const msg = h('div');
  let inv: InvitationInfo;
  try {
    inv = (await publicCall<Ok<'consoleInspectInvitation'>>('POST', '/invitations/inspect', { token } satisfies Body<'consoleInspectInvitation'>)).invitation;
  } catch (err) {
    return h('div', { class: 'center' }, h('div', { class: 'card login', id: 'invite' }, h('h1', {}, 'Invitation'), errorBox(err), h('p', {}, h('a', { href: '#/login' }, 'Sign in'))));
  }
  const done = () => {
    me = null;
    go(`#/o/${encodeURIComponent(inv.org.name)}/keys`);
  };
  const submit = (fn: () => Promise<void>) => async (e: Event) => {
    e.preventDefault();
    clear(msg);
    try {
      await fn();
      done();
    } catch (err) {
      msg.append(errorBox(err));
    }
  };
  const intro = [
    h('h1', {}, `Join ${inv.org.name}`),
    h('p', {}, `${inv.invited_by} invites `, h('strong', {}, inv.email), ` to ${inv.org.name} as ${inv.role}.`),
  ];
  let form: HTMLElement;
  if (inv.new_account) {
    const pw = h('input', { type: 'password', name: 'new_password', autocomplete: 'new-password', required: true, minlength: 12 });
    const again = h('input', { type: 'password', name: 'repeat', autocomplete: 'new-password', required: true, minlength: 12 });
    form = h('form', {
      class: 'card login', id: 'invite',
      onsubmit: submit(async () => {
        if (pw.value !== again.value) throw new Error('The two passwords differ');
        await publicCall('POST', '/invitations/accept', { token, new_password: pw.value } satisfies Body<'consoleAcceptInvitation'>);
        await login(inv.email, pw.value);
      }),
    }, ...intro, h('p', {}, 'Choose the password of your new account.'), h('label', {}, 'Password (12 characters or more)', pw), h('label', {}, 'Repeat it', again), msg, h('button', { type: 'submit', class: 'primary' }, 'Create account and join'));
  } else {
    const signedIn = await currentUser().catch(() => null);
    if (signedIn && signedIn.user.email.toLowerCase() === inv.email.toLowerCase()) {
      form = h('form', { class: 'card login', id: 'invite', onsubmit: submit(async () => { await publicCall('POST', '/invitations/accept', { token } satisfies Body<'consoleAcceptInvitation'>); }) },
        ...intro, h('p', {}, `You are signed in as ${signedIn.user.email}.`), msg, h('button', { type: 'submit', class: 'primary' }, 'Accept'));
    } else {
      const pw = h('input', { type: 'password', name: 'password', autocomplete: 'current-password', required: true });
      form = h('form', {
        class: 'card login', id: 'invite',
        onsubmit: submit(async () => {
          await publicCall('POST', '/invitations/accept', { token, password: pw.value } satisfies Body<'consoleAcceptInvitation'>);
          await login(inv.email, pw.value);
        }),
      }, ...intro, h('p', {}, `${inv.email} already has an account: sign in with its password to accept.`), h('label', {}, 'Password', pw), msg, h('button', { type: 'submit', class: 'primary' }, 'Sign in and accept'));
    }
  }
  return h('div', { class: 'center' }, form);
}

// ---------------------------------------------------------------- keys

function statusBadge(status: string): HTMLElement {
  return h('span', { class: `badge ${status.toLowerCase()}` }, status);
}

function keyForm(initial: Partial<Key>, submitLabel: string, onSubmit: (body: Body<'consoleCreateKey'>) => Promise<void>): HTMLElement {
  const name = h('input', { name: 'name', value: initial.name ?? '', required: true, maxlength: 200 });
  const description = h('input', { name: 'description', value: initial.description ?? '', maxlength: 2000 });
  const classes = h('input', { name: 'classes', value: (initial.classes ?? ['*']).join(', '), placeholder: '* for all, or person, dog' });
  const quota = h('input', { name: 'monthly_quota', type: 'number', min: 0, value: initial.monthly_quota ?? '' , placeholder: 'service default' });
  const rate = h('input', { name: 'rate_limit_per_minute', type: 'number', min: 1, value: initial.rate_limit_is_default ? '' : (initial.rate_limit_per_minute ?? ''), placeholder: 'service default' });
  const expires = h('input', { name: 'expires_at', type: 'date', value: initial.expires_at ? initial.expires_at.slice(0, 10) : '' });
  const msg = h('div');
  return h(
    'form',
    {
      class: 'card form',
      onsubmit: async (e: Event) => {
        e.preventDefault();
        clear(msg);
        const body: Body<'consoleCreateKey'> = {
          name: name.value,
          description: description.value === '' ? null : description.value,
          classes: classes.value.split(',').map((c) => c.trim()).filter(Boolean),
          expires_at: expires.value === '' ? null : `${expires.value}T00:00:00Z`,
          rate_limit_per_minute: rate.value === '' ? null : Number(rate.value),
        };
        if (quota.value !== '') body.monthly_quota = Number(quota.value);
        try {
          await onSubmit(body);
        } catch (err) {
          msg.append(errorBox(err));
        }
      },
    },
    h('div', { class: 'grid2' },
      h('label', {}, 'Name', name),
      h('label', {}, 'Description', description),
      h('label', {}, 'Classes', classes),
      h('label', {}, 'Monthly quota', quota),
      h('label', {}, 'Rate limit per minute', rate),
      h('label', {}, 'Expires on', expires),
    ),
    msg,
    h('button', { type: 'submit', class: 'primary' }, submitLabel),
  );
}

function secretPanel(secret: string, key: Key, after?: HTMLElement): HTMLElement {
  const copied = h('span', { class: 'muted' });
  return h(
    'div',
    { class: 'card secret', id: 'new-secret' },
    h('h2', {}, `Key "${key.name}" created`),
    h('p', { class: 'alert warn' }, 'Copy this key now. It is shown only once: we keep only its hash and cannot show it again.'),
    h('div', { class: 'secret-row' },
      h('code', { id: 'secret-value' }, secret),
      h('button', { onclick: async () => { await navigator.clipboard?.writeText(secret).catch(() => undefined); copied.textContent = 'Copied'; } }, 'Copy'),
      copied,
    ),
    after ?? null,
  );
}

async function keysPage(org: string): Promise<HTMLElement> {
  const { keys } = await api<Ok<'consoleListKeys'>>('GET', `/orgs/${encodeURIComponent(org)}/keys`);
  const top = h('div');
  const manage = can(org, 'member');
  const box = h('div', {}, top);

  const showCreate = () => {
    clear(top);
    top.append(
      h('h2', {}, 'Create a key'),
      keyForm({}, 'Create key', async (body) => {
        const r = await withFreshMfa(() => api<Ok<'consoleCreateKey'>>('POST', `/orgs/${encodeURIComponent(org)}/keys`, body));
        flash = (p) => secretPanel(r.secret, r.key, h('button', { onclick: () => clear(p.top) }, 'Done'));
        go(`#/o/${encodeURIComponent(org)}/keys?created=${r.key.id}`);
      }),
    );
  };

  const rotate = async (k: Key) => {
    // The spec's rotation: create the successor with the same settings, then revoke the old key once the client uses the new one.
    const r = await withFreshMfa(() => api<Ok<'consoleCreateKey'>>('POST', `/orgs/${encodeURIComponent(org)}/keys`, {
      name: `${k.name} (rotated ${new Date().toISOString().slice(0, 10)})`,
      description: k.description,
      classes: k.classes,
      monthly_quota: k.monthly_quota,
      rate_limit_per_minute: k.rate_limit_is_default ? null : k.rate_limit_per_minute,
      expires_at: k.expires_at,
    } satisfies Body<'consoleCreateKey'>));
    flash = (p) => secretPanel(r.secret, r.key, h('p', {}, 'Step 2: once your clients use the new key, revoke the old one. ', h('button', { class: 'danger', onclick: () => p.revoke(k.id) }, `Revoke "${k.name}"`)));
    go(`#/o/${encodeURIComponent(org)}/keys?rotated=${r.key.id}`);
  };

  const revoke = (k: Key) => {
    const typed = h('input', { name: 'confirm', placeholder: k.name, autocomplete: 'off' });
    const button = h('button', { class: 'danger', type: 'submit', disabled: true }, 'Revoke for good');
    typed.addEventListener('input', () => (button.disabled = typed.value !== k.name));
    const msg = h('div');
    clear(top);
    top.append(
      h(
        'form',
        {
          class: 'card danger-zone',
          id: 'revoke-form',
          onsubmit: async (e: Event) => {
            e.preventDefault();
            try {
              await api('POST', `/orgs/${encodeURIComponent(org)}/keys/${k.id}/revoke`);
              go(`#/o/${encodeURIComponent(org)}/keys?revoked=${k.id}`);
            } catch (err) {
              msg.append(errorBox(err));
            }
          },
        },
        h('h2', {}, `Revoke "${k.name}"?`),
        h('p', {}, 'A revoked key stops working at once and can never be resumed. Type the key\'s name to confirm.'),
        typed,
        msg,
        h('div', { class: 'row' }, button, h('button', { type: 'button', onclick: () => clear(top) }, 'Cancel')),
      ),
    );
    typed.focus();
  };

  const edit = (k: Key) => {
    clear(top);
    top.append(
      h('h2', {}, `Edit "${k.name}"`),
      keyForm(k, 'Save', async (body) => {
        await api('PATCH', `/orgs/${encodeURIComponent(org)}/keys/${k.id}`, body);
        go(`#/o/${encodeURIComponent(org)}/keys?saved=${Date.now()}`);
      }),
    );
  };

  const setStatus = async (k: Key, action: 'suspend' | 'resume') => {
    await api('POST', `/orgs/${encodeURIComponent(org)}/keys/${k.id}/${action}`);
    go(`#/o/${encodeURIComponent(org)}/keys?${action}=${Date.now()}`);
  };

  if (flash) {
    top.append(flash({ top, revoke: (id) => { const k = keys.find((x) => x.id === id); if (k) revoke(k); } }));
    flash = null;
  }

  const rows = keys.map((k) =>
    h(
      'tr',
      { 'data-key': k.name },
      h('td', {}, h('a', { href: `#/o/${encodeURIComponent(org)}/keys/${k.id}` }, k.name), k.description ? h('div', { class: 'muted' }, k.description) : null),
      h('td', {}, h('code', {}, `${k.prefix}…`)),
      h('td', {}, statusBadge(k.status)),
      h('td', {}, k.classes.length === 0 ? '(none)' : k.classes.join(', ')),
      h('td', { class: 'num' }, `${fmtNum(k.used_this_month)} / ${fmtNum(k.monthly_quota)}`),
      h('td', { class: 'num' }, `${k.rate_limit_per_minute}/min`),
      h('td', {}, fmtDate(k.last_used_at)),
      h('td', {}, fmtDate(k.created_at)),
      h('td', {}, k.expires_at ? fmtDate(k.expires_at) : 'never'),
      h(
        'td',
        { class: 'actions' },
        manage && k.status !== 'revoked'
          ? [
              h('button', { onclick: () => edit(k) }, 'Edit'),
              k.status === 'active' ? h('button', { onclick: () => setStatus(k, 'suspend') }, 'Suspend') : h('button', { onclick: () => setStatus(k, 'resume') }, 'Resume'),
              h('button', { onclick: () => rotate(k) }, 'Rotate'),
              h('button', { class: 'danger', onclick: () => revoke(k) }, 'Revoke'),
            ]
          : null,
      ),
    ),
  );
  box.append(
    h('div', { class: 'title-row' }, h('h1', {}, 'API keys'), manage ? h('button', { class: 'primary', id: 'create-key', onclick: showCreate }, 'Create key') : null),
    keys.length === 0
      ? h('p', { class: 'muted' }, 'No keys yet.')
      : h(
          'table',
          { class: 'keys' },
          h('thead', {}, h('tr', {}, ['Name', 'Prefix', 'Status', 'Classes', 'Used / quota', 'Rate limit', 'Last used', 'Created', 'Expires', ''].map((c) => h('th', {}, c)))),
          h('tbody', {}, rows),
        ),
  );
  return box;
}

// ---------------------------------------------------------------- key detail: usage and requests

function usagePanel(usage: Usage): HTMLElement {
  const totals = usage.days.reduce((a, d) => ({ done: a.done + d.done, error: a.error + d.error, refused: a.refused + d.refused }), { done: 0, error: 0, refused: 0 });
  return h(
    'div',
    { class: 'card' },
    h('h2', {}, `Requests per day, last ${usage.days.length} days`),
    stackedDays(usage.days, ['done', 'error', 'refused'], 'requests per day'),
    legend(['done', 'error', 'refused']),
    h('p', { class: 'totals' }, `Done ${totals.done} · Error ${totals.error} · Refused ${totals.refused}`),
    h('h3', {}, `Monthly quota (${usage.quota.month})`),
    gauge(usage.quota.used, usage.quota.limit),
    h('p', {}, 'Call balance: ', h('strong', { id: 'balance' }, usage.balance === null ? 'unlimited' : fmtNum(usage.balance))),
  );
}

const RATING: Record<string, string> = { '-1': 'bad', '0': 'neutral', '1': 'good' };

async function keyPage(org: string, id: string): Promise<HTMLElement> {
  const o = encodeURIComponent(org);
  const [{ key }, usage, { requests }] = await Promise.all([
    api<Ok<'consoleGetKey'>>('GET', `/orgs/${o}/keys/${id}`),
    api<Ok<'consoleGetUsage'>>('GET', `/orgs/${o}/usage?days=30&key_id=${id}`),
    api<Ok<'consoleListKeyRequests'>>('GET', `/orgs/${o}/keys/${id}/requests?limit=20`),
  ]);
  const list = requests.map((r) =>
    h(
      'div',
      { class: 'card request', 'data-request': r.id },
      h('div', { class: 'request-head' },
        statusBadge(r.status),
        h('code', {}, r.external_id ?? r.id),
        h('span', {}, fmtDate(r.created_at)),
        h('span', {}, r.processing_time_ms === null ? '' : `${r.processing_time_ms} ms`),
        h('span', { class: 'feedback' }, r.feedback === null ? 'no feedback' : `feedback: ${RATING[String(r.feedback)]}`),
      ),
      h('div', { class: 'request-body' },
        r.image_url ? annotatedImage(new URL(r.image_url, location.href).pathname + new URL(r.image_url, location.href).search, r.results) : h('div', { class: 'muted' }, 'image not stored'),
        h('ul', { class: 'detections' }, r.results.length === 0 ? h('li', { class: 'muted' }, r.error ?? 'nothing detected') : r.results.map((d) => h('li', {}, `${d.label} (${d.external_id})${d.confidence === undefined ? '' : ` ${Math.round(d.confidence * 100)}%`}`))),
      ),
    ),
  );
  return h(
    'div',
    {},
    h('p', {}, h('a', { href: `#/o/${o}/keys` }, '← API keys')),
    h('div', { class: 'title-row' }, h('h1', {}, key.name), statusBadge(key.status), h('code', {}, `${key.prefix}…`)),
    usagePanel(usage),
    h('h2', {}, 'Latest requests'),
    requests.length === 0 ? h('p', { class: 'muted' }, 'No requests yet.') : list,
  );
}

async function usagePage(org: string): Promise<HTMLElement> {
  const o = encodeURIComponent(org);
  const [usage, { keys }] = await Promise.all([api<Ok<'consoleGetUsage'>>('GET', `/orgs/${o}/usage?days=30`), api<Ok<'consoleListKeys'>>('GET', `/orgs/${o}/keys`)]);
  return h(
    'div',
    {},
    h('h1', {}, 'Usage'),
    usagePanel(usage),
    h('h2', {}, 'Per key'),
    h('table', {},
      h('thead', {}, h('tr', {}, ['Key', 'Status', 'Used this month', 'Quota'].map((c) => h('th', {}, c)))),
      h('tbody', {}, keys.map((k) => h('tr', {}, h('td', {}, h('a', { href: `#/o/${o}/keys/${k.id}` }, k.name)), h('td', {}, statusBadge(k.status)), h('td', { class: 'num' }, fmtNum(k.used_this_month)), h('td', { class: 'num' }, fmtNum(k.monthly_quota))))),
    ),
  );
}

async function feedbackPage(org: string): Promise<HTMLElement> {
  const fb = await api<Ok<'consoleGetFeedback'>>(
    'GET',
    `/orgs/${encodeURIComponent(org)}/feedback?days=30`,
  );
  return h(
    'div',
    {},
    h('h1', {}, 'Feedback'),
    h('div', { class: 'card' }, h('h2', {}, 'Ratings per day'), stackedDays(fb.by_day, ['good', 'neutral', 'bad'], 'ratings per day'), legend(['good', 'neutral', 'bad'])),
    h('div', { class: 'card' },
      h('h2', {}, 'Per label'),
      fb.by_label.length === 0
        ? h('p', { class: 'muted' }, 'No ratings in the last 30 days.')
        : h('table', {},
            h('thead', {}, h('tr', {}, ['Label', 'Good (1)', 'Neutral (0)', 'Bad (-1)'].map((c) => h('th', {}, c)))),
            h('tbody', {}, fb.by_label.map((l) => h('tr', {}, h('td', {}, l.label), h('td', { class: 'num' }, l.good), h('td', { class: 'num' }, l.neutral), h('td', { class: 'num' }, l.bad)))),
          ),
    ),
  );
}

// ---------------------------------------------------------------- members, audit, settings

async function membersPage(org: string): Promise<HTMLElement> {
  const o = encodeURIComponent(org);
  const manage = can(org, 'admin');
  const [{ members }, { invitations }] = await Promise.all([
    api<Ok<'consoleListMembers'>>('GET', `/orgs/${o}/members`),
    manage ? api<Ok<'consoleListInvitations'>>('GET', `/orgs/${o}/invitations`) : Promise.resolve({ invitations: [] as Invitation[] }),
  ]);
  const isOwner = roleIn(org) === 'owner';
  const msg = h('div');
  const roles: Role[] = isOwner ? ['owner', 'admin', 'member', 'viewer'] : ['admin', 'member', 'viewer'];
  const act = async (fn: () => Promise<unknown>) => {
    clear(msg);
    try {
      await fn();
      go(`#/o/${o}/members?t=${Date.now()}`);
    } catch (err) {
      msg.append(errorBox(err));
    }
  };
  const email = h('input', { type: 'email', name: 'email', required: true, placeholder: 'name@example.com' });
  const role = h('select', { name: 'role' }, roles.map((r) => h('option', { value: r, selected: r === 'member' }, r)));
  const added = h('div');
  if (memberNotice) {
    added.append(memberNotice);
    memberNotice = null;
  }
  return h(
    'div',
    {},
    h('h1', {}, 'Members'),
    msg,
    added,
    h('table', {},
      h('thead', {}, h('tr', {}, ['E-mail', 'Role', 'Since', ''].map((c) => h('th', {}, c)))),
      h('tbody', {}, members.map((m) => {
        const editable = manage && (isOwner || m.role !== 'owner');
        const sel = h('select', { 'aria-label': `role of ${m.user.email}`, disabled: !editable, onchange: (e: Event) => act(() => api('PATCH', `/orgs/${o}/members/${m.user.id}`, { role: (e.target as HTMLSelectElement).value as Role } satisfies Body<'consoleChangeMember'>)) },
          (['owner', 'admin', 'member', 'viewer'] satisfies Role[]).map((r) => h('option', { value: r, selected: r === m.role, disabled: !isOwner && r === 'owner' }, r)));
        return h('tr', {}, h('td', {}, m.user.email), h('td', {}, sel), h('td', {}, fmtDate(m.created_at)),
          h('td', {}, editable ? h('button', { class: 'danger', onclick: () => confirm(`Remove ${m.user.email}?`) && act(() => api('DELETE', `/orgs/${o}/members/${m.user.id}`)) }, 'Remove') : null));
      })),
    ),
    manage && invitations.length > 0
      ? h('div', { class: 'card', id: 'invitations' },
          h('h2', {}, 'Pending invitations'),
          h('table', {},
            h('thead', {}, h('tr', {}, ['E-mail', 'Role', 'Invited by', 'Expires', ''].map((c) => h('th', {}, c)))),
            h('tbody', {}, invitations.map((i) => h('tr', { 'data-invitation': i.email },
              h('td', {}, i.email), h('td', {}, i.role), h('td', {}, i.invited_by.email), h('td', {}, fmtDate(i.expires_at)),
              h('td', {}, isOwner || i.role !== 'owner' ? h('button', { class: 'danger', onclick: () => confirm(`Revoke the invitation of ${i.email}?`) && act(() => api('DELETE', `/orgs/${o}/invitations/${i.id}`)) }, 'Revoke') : null),
            ))),
          ),
        )
      : null,
    manage
      ? h('form', {
          class: 'card form',
          onsubmit: async (e: Event) => {
            e.preventDefault();
            clear(msg);
            try {
              const r = await api<Ok<'consoleInviteMember'>>('POST', `/orgs/${o}/members`, { email: email.value, role: role.value as Role } satisfies Body<'consoleInviteMember'>);
              // With SMTP the link went to the invitee only; without it, it is shown here once.
              memberNotice = r.delivered === 'email' || r.invitation_url === undefined
                ? h('div', { class: 'card', id: 'invitation-emailed' },
                    h('p', { class: 'alert ok' }, `Invitation e-mailed to ${r.invitation.email} (${r.invitation.role}). The link in it works once and expires ${fmtDate(r.invitation.expires_at)}.`))
                : invitationPanel(r.invitation, r.invitation_url);
              go(`#/o/${o}/members?invited=${Date.now()}`);
            } catch (err) {
              msg.append(errorBox(err));
            }
          },
        }, h('h2', {}, 'Invite a member'), h('div', { class: 'row' }, email, role, h('button', { class: 'primary', type: 'submit' }, 'Invite')))
      : null,
  );
}

/** The one-time invitation link, shown once to the inviting admin. */
function invitationPanel(inv: Invitation, url: string): HTMLElement {
  const copied = h('span', { class: 'muted' });
  return h(
    'div',
    { class: 'card secret', id: 'invitation-link' },
    h('h2', {}, `${inv.email} is invited as ${inv.role}`),
    h('p', { class: 'alert warn' }, `Send this link to ${inv.email} yourself (no e-mail is sent). It is shown only now, works once and expires ${fmtDate(inv.expires_at)}. They choose their own password, or accept with the account they already have.`),
    h('div', { class: 'secret-row' },
      h('code', { id: 'invitation-url' }, url),
      h('button', { onclick: async () => { await navigator.clipboard?.writeText(url).catch(() => undefined); copied.textContent = 'Copied'; } }, 'Copy'),
      copied,
    ),
  );
}


/** What the action filter offers (the API takes any action, or a prefix such as key.*). */
const AUDIT_ACTION_CHOICES = [
  'key.*', 'key.create', 'key.update', 'key.suspend', 'key.resume', 'key.revoke',
  'member.*', 'member.add', 'member.role_change', 'member.remove',
  'invitation.*', 'invitation.create', 'invitation.accept', 'invitation.revoke',
  'org.*', 'access.forbidden_role',
];
const AUDIT_PAGE_SIZE = 200;

/** The filters of the audit page, kept in its hash (`#/o/acme/audit?action=key.*&since=2026-11-01`). */
function auditQuery(form: { action: string; actor: string; since: string; until: string }, extra: Record<string, string> = {}): URLSearchParams {
  const q = new URLSearchParams();
  if (form.action) q.set('action', form.action);
  if (form.actor) q.set('actor', form.actor);
  // Days are UTC; "until" names the last day shown, so the API gets the start of the next one.
  if (form.since) q.set('since', `${form.since}T00:00:00Z`);
  if (form.until) q.set('until', new Date(Date.parse(`${form.until}T00:00:00Z`) + 86_400_000).toISOString());
  for (const [k, v] of Object.entries(extra)) q.set(k, v);
  return q;
}

async function auditPage(org: string): Promise<HTMLElement> {
  const o = encodeURIComponent(org);
  const params = new URLSearchParams(location.hash.split('?')[1] ?? '');
  const current = { action: params.get('action') ?? '', actor: params.get('actor') ?? '', since: params.get('since') ?? '', until: params.get('until') ?? '' };
  const before = params.get('before') ?? '';
  const query = auditQuery(current, { limit: String(AUDIT_PAGE_SIZE), ...(before ? { before } : {}) });
  const { entries } = await api<Ok<'consoleGetAudit'>>('GET', `/orgs/${o}/audit?${query.toString()}`);
  const action = h('input', { name: 'action', list: 'audit-actions', placeholder: 'all actions', value: current.action, 'aria-label': 'action' });
  const actor = h('input', { name: 'actor', placeholder: 'anyone (e-mail, or recog CLI)', value: current.actor, 'aria-label': 'actor' });
  const since = h('input', { type: 'date', name: 'since', value: current.since, 'aria-label': 'from (UTC day)' });
  const until = h('input', { type: 'date', name: 'until', value: current.until, 'aria-label': 'until (UTC day, included)' });
  const values = () => ({ action: action.value.trim(), actor: actor.value.trim(), since: since.value, until: until.value });
  const pageHash = (extra: Record<string, string> = {}) => {
    const v = values();
    const q = new URLSearchParams();
    for (const [k, val] of Object.entries({ ...v, ...extra })) if (val) q.set(k, val);
    return `#/o/${o}/audit?${q.toString()}`;
  };
  const exportJsonl = async () => {
    // A plain download (the access cookie goes with it); the call before it refreshes an expired session.
    await api('GET', `/orgs/${o}`);
    location.assign(`${BASE}/orgs/${o}/audit?${auditQuery(values(), { format: 'jsonl' }).toString()}`);
  };
  const older = entries.length === AUDIT_PAGE_SIZE ? entries[entries.length - 1].id : null;
  return h(
    'div',
    {},
    h('h1', {}, 'Audit log'),
    h('form', {
      class: 'card form filters',
      id: 'audit-filters',
      onsubmit: (e: Event) => {
        e.preventDefault();
        go(pageHash());
      },
    },
      h('datalist', { id: 'audit-actions' }, AUDIT_ACTION_CHOICES.map((a) => h('option', { value: a }))),
      h('div', { class: 'row' },
        h('label', {}, 'Action', action), h('label', {}, 'Who', actor), h('label', {}, 'From', since), h('label', {}, 'Until', until),
      ),
      h('div', { class: 'row' },
        h('button', { type: 'submit', class: 'primary' }, 'Filter'),
        h('button', { type: 'button', onclick: () => go(`#/o/${o}/audit`) }, 'Clear'),
        h('button', { type: 'button', id: 'audit-export', onclick: () => void exportJsonl() }, 'Export JSON lines'),
      ),
    ),
    entries.length === 0
      ? h('p', { class: 'muted' }, 'No entries match.')
      : h('table', { class: 'audit' },
          h('thead', {}, h('tr', {}, ['When', 'Who', 'Action', 'Target', 'Details', 'From'].map((c) => h('th', {}, c)))),
          h('tbody', {}, entries.map((e) => h('tr', {}, h('td', {}, fmtDate(e.created_at)), h('td', {}, e.actor.email), h('td', {}, h('code', {}, e.action)), h('td', {}, `${e.target.type} ${e.target.name ?? e.target.id}`), h('td', { class: 'details' }, JSON.stringify(e.details)), h('td', {}, e.ip ?? '')))),
        ),
    older !== null ? h('p', {}, h('a', { href: pageHash({ before: String(older) }) }, 'Older entries')) : null,
  );
}

/** Owners require (or stop requiring) two-factor authentication of every member. */
function mfaRequirement(org: string, required: boolean, role: Role): HTMLElement {
  const msg = h('div');
  const toggle = h('input', { type: 'checkbox', name: 'mfa_required', checked: required, disabled: role !== 'owner' });
  toggle.addEventListener('change', async () => {
    clear(msg);
    try {
      await api('PUT', `/orgs/${encodeURIComponent(org)}/mfa`, { required: toggle.checked } satisfies Body<'consoleSetOrgMfa'>);
      msg.append(h('p', { class: 'alert ok' }, toggle.checked ? 'Every member now needs two-factor authentication.' : 'Two-factor authentication is no longer required.'));
    } catch (err) {
      toggle.checked = !toggle.checked;
      msg.append(errorBox(err));
    }
  });
  return h('div', { class: 'card', id: 'mfa-requirement' },
    h('h2', {}, 'Two-factor authentication'),
    h('label', {}, toggle, ' Require two-factor authentication of every member'),
    h('p', { class: 'muted' }, role === 'owner' ? 'Members without it are refused this organisation until they set it up on their Account page. Turn it on for your own account first.' : 'Only owners change this.'),
    msg,
  );
}

async function settingsPage(org: string): Promise<HTMLElement> {
  const [o, { mfa_required }] = await Promise.all([
    api<Ok<'consoleGetOrg'>>('GET', `/orgs/${encodeURIComponent(org)}`),
    api<Ok<'consoleGetOrgMfa'>>('GET', `/orgs/${encodeURIComponent(org)}/mfa`),
  ]);
  return h(
    'div',
    {},
    h('h1', {}, 'Organisation'),
    h('dl', { class: 'card facts' },
      h('dt', {}, 'Name'), h('dd', {}, o.name),
      h('dt', {}, 'Id'), h('dd', {}, h('code', {}, o.id)),
      h('dt', {}, 'Status'), h('dd', {}, statusBadge(o.status)),
      h('dt', {}, 'Call balance'), h('dd', {}, o.balance === null ? 'unlimited' : fmtNum(o.balance)),
      h('dt', {}, 'Created'), h('dd', {}, fmtDate(o.created_at)),
      h('dt', {}, 'Your role'), h('dd', {}, o.role),
    ),
    h('p', { class: 'muted' }, 'Name, status and balance are changed by the service operators (the recog CLI), not here.'),
    mfaRequirement(o.name, mfa_required, o.role),
  );
}

/** The Account page's two-factor section: set up (secret, confirm, recovery codes shown once) or turn off. */
function twoFactorCard(status: { totp: 'none' | 'pending' | 'active'; recovery_codes_left: number }): HTMLElement {
  const card = h('div', { class: 'card form', id: 'two-factor' });
  const msg = h('div');
  const reload = () => go(`#/account?t=${Date.now()}`);
  const fail = (err: unknown) => {
    clear(msg);
    msg.append(errorBox(err));
  };
  if (status.totp === 'active') {
    const password = h('input', { type: 'password', name: 'password', autocomplete: 'current-password', required: true });
    const code = h('input', { name: 'code', autocomplete: 'one-time-code', required: true, maxlength: 40 });
    card.append(
      h('h2', {}, 'Two-factor authentication'),
      h('p', {}, h('span', { class: 'badge active' }, 'on'), ` ${status.recovery_codes_left} recovery codes left.`),
      h('form', { onsubmit: async (e: Event) => {
        e.preventDefault();
        try {
          await api('POST', '/me/mfa/totp/disable', { password: password.value, ...secondFactor(code.value) } satisfies Body<'consoleDisableTotp'>);
          reload();
        } catch (err) {
          fail(err);
        }
      } },
        h('label', {}, 'Password', password),
        h('label', {}, 'Current code (or a recovery code)', code),
        msg,
        h('button', { type: 'submit', class: 'danger' }, 'Turn off two-factor authentication'),
      ),
    );
    return card;
  }
  const password = h('input', { type: 'password', name: 'password', autocomplete: 'current-password', required: true });
  const start = async (e: Event) => {
    e.preventDefault();
    try {
      const { secret, otpauth_uri } = await api<Ok<'consoleStartTotp'>>('POST', '/me/mfa/totp', { password: password.value } satisfies Body<'consoleStartTotp'>);
      const code = h('input', { name: 'code', autocomplete: 'one-time-code', inputmode: 'numeric', required: true, maxlength: 10 });
      clear(card);
      card.append(
        h('h2', {}, 'Set up two-factor authentication'),
        h('p', {}, 'Add this account to your authenticator app: open the link on the device that has the app, or type the key.'),
        h('p', {}, h('a', { href: otpauth_uri, id: 'otpauth-uri' }, 'otpauth link')),
        h('p', {}, 'Key: ', h('code', { id: 'totp-secret' }, secret.replace(/(.{4})/g, '$1 ').trim())),
        h('form', { onsubmit: async (e: Event) => {
          e.preventDefault();
          try {
            const { recovery_codes } = await api<Ok<'consoleConfirmTotp'>>('POST', '/me/mfa/totp/confirm', { code: code.value.replace(/\s/g, '') } satisfies Body<'consoleConfirmTotp'>);
            clear(card);
            card.append(
              h('h2', {}, 'Two-factor authentication is on'),
              h('p', { class: 'alert warn' }, 'Save these recovery codes now: they are shown only once. Each works once, when you have no access to your authenticator app.'),
              h('ul', { id: 'recovery-codes' }, recovery_codes.map((c) => h('li', {}, h('code', {}, c)))),
              h('button', { onclick: reload }, 'I saved them'),
            );
          } catch (err) {
            fail(err);
          }
        } }, h('label', {}, 'Code from the app', code), msg, h('button', { type: 'submit', class: 'primary' }, 'Confirm')),
      );
    } catch (err) {
      fail(err);
    }
  };
  card.append(
    h('h2', {}, 'Two-factor authentication'),
    h('p', { class: 'muted' }, 'Off. With it on, signing in and creating keys also ask for a code from an authenticator app.'),
    h('form', { onsubmit: start },
      h('label', {}, 'Password', password),
      msg,
      h('button', { type: 'submit', class: 'primary', id: 'mfa-start' }, 'Set up two-factor authentication'),
    ),
  );
  return card;
}

async function accountPage(): Promise<HTMLElement> {
  const [{ sessions }, { entries: security }, mfa] = await Promise.all([
    api<Ok<'consoleListSessions'>>('GET', '/sessions'),
    api<Ok<'consoleGetSecurityLog'>>('GET', '/me/audit?limit=20'),
    api<Ok<'consoleGetMfa'>>('GET', '/me/mfa'),
  ]);
  const current = h('input', { type: 'password', name: 'current', autocomplete: 'current-password', required: true });
  const next = h('input', { type: 'password', name: 'new', autocomplete: 'new-password', required: true, minlength: 12 });
  const msg = h('div');
  const notice = accountNotice;
  accountNotice = null;
  return h(
    'div',
    {},
    h('h1', {}, 'Your account'),
    notice,
    twoFactorCard(mfa),
    h('div', { class: 'card' },
      h('h2', {}, 'Sessions'),
      h('table', {},
        h('thead', {}, h('tr', {}, ['Signed in', 'Last active', 'Browser', 'Address', ''].map((c) => h('th', {}, c)))),
        h('tbody', {}, sessions.map((s) => h('tr', {}, h('td', {}, fmtDate(s.created_at)), h('td', {}, fmtDate(s.last_used_at)), h('td', { class: 'ua' }, s.user_agent ?? ''), h('td', {}, s.ip ?? ''),
          h('td', {}, s.current ? h('span', { class: 'badge active' }, 'this one') : h('button', { onclick: async () => { await api('DELETE', `/sessions/${s.id}`); go(`#/account?t=${Date.now()}`); } }, 'Revoke'))))),
      ),
    ),
    h('div', { class: 'card', id: 'security-log' },
      h('h2', {}, 'Security log'),
      h('p', { class: 'muted' }, 'Sign-ins, failed sign-ins, sign-outs, password changes and revoked sessions of your account (the latest 20).'),
      h('table', { class: 'audit' },
        h('thead', {}, h('tr', {}, ['When', 'Event', 'By', 'From'].map((c) => h('th', {}, c)))),
        h('tbody', {}, security.map((e) => h('tr', {}, h('td', {}, fmtDate(e.created_at)), h('td', {}, h('code', {}, e.action)), h('td', {}, e.actor.email), h('td', {}, e.ip ?? '')))),
      ),
    ),
    h('form', {
      class: 'card form',
      onsubmit: async (e: Event) => {
        e.preventDefault();
        clear(msg);
        try {
          // The answer starts a new session (new cookies): every session, this one's old one too, has ended.
          await api('POST', '/me/password', { current_password: current.value, new_password: next.value } satisfies Body<'consoleChangePassword'>);
          accountNotice = h('p', { class: 'alert ok', id: 'password-changed' }, 'Password changed; every other session was signed out (this one continues in a new session).');
          go(`#/account?changed=${Date.now()}`);
        } catch (err) {
          msg.append(errorBox(err));
        }
      },
    }, h('h2', {}, 'Change password'), h('label', {}, 'Current password', current), h('label', {}, 'New password (12 characters or more)', next), msg, h('button', { type: 'submit', class: 'primary' }, 'Change password')),
  );
}

/**
 * The only page while the password is temporary (set by an operator, `password_must_change`):
 * every other route answers 403 PASSWORD_CHANGE_REQUIRED until a new one is chosen.
 */
function newPasswordPage(email: string): HTMLElement {
  const current = h('input', { type: 'password', name: 'current', autocomplete: 'current-password', required: true });
  const next = h('input', { type: 'password', name: 'new', autocomplete: 'new-password', required: true, minlength: 12 });
  const again = h('input', { type: 'password', name: 'repeat', autocomplete: 'new-password', required: true, minlength: 12 });
  const msg = h('div');
  return h(
    'div',
    { class: 'center' },
    h('form', {
      class: 'card login',
      id: 'new-password',
      onsubmit: async (e: Event) => {
        e.preventDefault();
        clear(msg);
        try {
          if (next.value !== again.value) throw new Error('The two passwords differ');
          // The answer starts a new session (new cookies) without the restriction.
          await api('POST', '/me/password', { current_password: current.value, new_password: next.value } satisfies Body<'consoleChangePassword'>);
          me = null;
          go('#/');
        } catch (err) {
          msg.append(errorBox(err));
        }
      },
    },
    h('h1', {}, 'Choose your new password'),
    h('p', {}, `The password of ${email} was set by an administrator. Choose your own before you continue.`),
    h('label', {}, 'Current (temporary) password', current),
    h('label', {}, 'New password (12 characters or more)', next),
    h('label', {}, 'Repeat it', again),
    msg,
    h('button', { type: 'submit', class: 'primary' }, 'Set password and continue'),
    h('button', { type: 'button', class: 'link', onclick: async () => { await logout(); me = null; go('#/login'); } }, 'Sign out')),
  );
}

// ---------------------------------------------------------------- router

async function render(): Promise<void> {
  const path = location.hash.replace(/^#/, '').split('?')[0] || '/';
  if (path === '/login') {
    clear(root);
    root.append(loginPage());
    document.title = 'Sign in · Recognition console';
    return;
  }
  if (path.startsWith('/invite/')) {
    const content = await invitePage(decodeURIComponent(path.slice('/invite/'.length)));
    clear(root);
    root.append(content);
    document.title = 'Invitation · Recognition console';
    root.dataset.page = 'invite';
    return;
  }
  try {
    me ??= await api<Ok<'consoleGetMe'>>('GET', '/me');
  } catch {
    go('#/login');
    return;
  }
  if (me.password_must_change) {
    clear(root);
    root.append(newPasswordPage(me.user.email));
    document.title = 'New password · Recognition console';
    root.dataset.page = 'new-password';
    return;
  }
  const parts = path.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts.length === 0) {
    const first = me.memberships[0];
    if (first) go(`#/o/${encodeURIComponent(first.org.name)}/keys`);
    else {
      clear(root);
      root.append(layout(null, '', h('p', {}, 'You are not a member of any organisation yet. Ask an owner or admin to add you.')));
    }
    return;
  }
  let page: Promise<HTMLElement>;
  let org: string | null = null;
  let active = parts[2] ?? '';
  if (parts[0] === 'account') {
    page = accountPage();
    active = 'account';
    org = me.memberships[0]?.org.name ?? null;
  } else if (parts[0] === 'o' && parts[1]) {
    org = parts[1];
    const o = org;
    page =
      parts[2] === 'keys' && parts[3] ? keyPage(o, parts[3])
      : parts[2] === 'usage' ? usagePage(o)
      : parts[2] === 'feedback' ? feedbackPage(o)
      : parts[2] === 'members' ? membersPage(o)
      : parts[2] === 'audit' ? auditPage(o)
      : parts[2] === 'settings' ? settingsPage(o)
      : keysPage(o);
    if (!parts[2]) active = 'keys';
  } else {
    page = Promise.resolve(h('p', {}, 'No such page.'));
  }
  let content: HTMLElement;
  try {
    content = await page;
  } catch (err) {
    content = errorBox(err);
  }
  clear(root);
  root.append(layout(org, active, content));
  document.title = `${active || 'Console'} · ${org ?? ''} · Recognition console`;
  root.dataset.page = active;
}

window.addEventListener('hashchange', () => void render());
void render();
