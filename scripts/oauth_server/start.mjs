// A loopback OAuth 2 authorization server for the tests (oauth2-mock-server): prints one JSON
// line, {"issuer", "port"}, then serves until killed. Tokens come from POST /token with
// grant_type=client_credentials; what the tests need of them is said in the form:
//   resource=URL      the audience (RFC 8707; the mock itself ignores `resource`)
//   expires_in=SECS   the expiry, from now (negative: already expired)
//   not_before_in=SECS  `nbf`, from now
// and POST /introspection answers for the tokens it issued (RFC 7662). GET /authorize grants at
// once (redirects back with a code); the token for that code holds the scopes asked for there
// (the mock itself would say "dummy").
import { OAuth2Server, Events } from 'oauth2-mock-server';

const server = new OAuth2Server();
await server.issuer.keys.generate('RS256');
const scopesOfCodes = new Map();
server.service.on(Events.BeforeAuthorizeRedirect, (redirect, req) => {
  const code = redirect.url.searchParams.get('code');
  if (code) scopesOfCodes.set(code, req.query.scope ?? '');
});
server.service.on(Events.BeforeTokenSigning, (token, req) => {
  const form = req.body ?? {};
  const now = Math.floor(Date.now() / 1000);
  if (typeof form.resource === 'string' && token.payload.aud === undefined) {
    token.payload.aud = form.resource;
  }
  if (form.expires_in !== undefined) token.payload.exp = now + Number(form.expires_in);
  if (form.not_before_in !== undefined) token.payload.nbf = now + Number(form.not_before_in);
  token.payload.sub = form.client_id ?? 'test-client';
  if (form.grant_type === 'authorization_code' && scopesOfCodes.has(form.code)) {
    token.payload.scope = scopesOfCodes.get(form.code);
  }
});
// RFC 7662 at /introspection: an issued token is active, with its claims; anything else is
// not. (The mock's own /introspect calls every token active.)
const issued = new Set();
server.service.on(Events.BeforeResponse, (response, req) => {
  const token = response.body?.access_token;
  if (typeof token !== 'string') return;
  issued.add(token);
  if (req.body?.grant_type === 'authorization_code') {
    response.body.scope = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).scope;
    scopesOfCodes.delete(req.body.code);
  }
});
server.service.addRoute('POST', '/introspection', (req, res) => {
  const token = req.body?.token;
  let answer = { active: false };
  if (typeof token === 'string' && issued.has(token)) {
    const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
    answer = { active: true, ...claims };
  }
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(answer));
});
// TOOLPRISM_OAUTH_PORT: a port of the test's choosing (an issuer that comes up late).
await server.start(Number(process.env.TOOLPRISM_OAUTH_PORT ?? 0), '127.0.0.1');
console.log(JSON.stringify({ issuer: server.issuer.url, port: server.address().port }));
process.on('SIGTERM', async () => { await server.stop(); process.exit(0); });
