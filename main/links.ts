// Links the window may hand to the system browser: http(s) addresses only.
export const isExternalLink = (url: string) => /^https?:\/\/[^\s]+$/i.test(url) && URL.canParse(url);
