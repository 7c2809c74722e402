/**
 * Which base URLs a client accepts: https anywhere; plain http only to this machine
 * (127.0.0.0/8, ::1, localhost), where nothing travels over a network. Anything else would
 * send the API key, the password and the tokens readable to everyone on the path.
 */

/** The base URL was refused: not http(s), or plain http to a host other than loopback. */
export class InsecureBaseUrlError extends TypeError {
  constructor(
    message: string,
    /** The URL as given. */
    readonly baseUrl: string,
  ) {
    super(message);
    this.name = 'InsecureBaseUrlError';
  }
}

/** True for 127.0.0.0/8, ::1 and localhost (the WHATWG parser has already normalised 127.1, 0x7f.1, …). */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/\.$/, '');
  if (h === 'localhost' || h === '[::1]' || h === '::1') return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

/**
 * Parses and checks a base URL. `allowInsecureHttp` lets plain http reach any host: for a
 * lab network you trust, never for the internet.
 */
export function checkBaseUrl(baseUrl: string, allowInsecureHttp = false): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new InsecureBaseUrlError(`not a URL: ${baseUrl}`, baseUrl);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new InsecureBaseUrlError(`the base URL must be https:// (or http:// to this machine), not ${url.protocol}`, baseUrl);
  }
  if (url.username || url.password) throw new InsecureBaseUrlError('the base URL must not carry a user name or password', baseUrl);
  if (url.protocol === 'http:' && !allowInsecureHttp && !isLoopbackHost(url.hostname)) {
    throw new InsecureBaseUrlError(
      `refusing plain http to ${url.host}: the API key, password and tokens would travel unencrypted ` +
        `(http is allowed only to 127.0.0.0/8, ::1 and localhost); use https://${url.host}${url.pathname === '/' ? '' : url.pathname}`,
      baseUrl,
    );
  }
  return url;
}
