import type { CallbackOutcome } from '../../connections/oauth-flow.js';

const titles: Record<CallbackOutcome['page'], string> = {
  connected: 'Connected',
  denied: 'Authorization denied',
  failed: 'Authorization failed',
  expired: 'Authorization expired',
  invalid: 'Invalid authorization link',
};

/** A bad or used link is the browser's request at fault; every other page reports an outcome. */
const statuses: Record<CallbackOutcome['page'], number> = {
  connected: 200,
  denied: 200,
  failed: 200,
  expired: 410,
  invalid: 400,
};

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

/**
 * The small page the person sees after the provider's redirect. It names the
 * outcome (data-outcome for scripts and tests) and nothing secret; the
 * provider's words in `detail` are escaped.
 */
export function oauthResultPage(outcome: CallbackOutcome): { status: number; html: string } {
  const title = titles[outcome.page];
  const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title} · caseflow</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}h1{font-size:1.4rem}</style></head>
<body data-outcome="${outcome.page}"><h1>${title}</h1><p>${escapeHtml(outcome.detail)}</p></body>
</html>
`;
  return { status: statuses[outcome.page], html };
}
