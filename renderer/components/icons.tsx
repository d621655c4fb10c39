// The list's small pictures, as inline SVG in the text's colour (the CSP allows
// no image but the app's own). An icon with `label` is an image with that text
// alternative; without, it is decoration beside words or inside a named button.
import type { ReactNode } from 'react';

const PATHS = {
  up: <path d="M8 13V3M3.5 7.5 8 3l4.5 4.5" />,
  down: <path d="M8 3v10M3.5 8.5 8 13l4.5-4.5" />,
  pause: <path d="M5.5 3.5v9M10.5 3.5v9" />,
  play: <path d="M5 3.2v9.6L12.5 8z" />,
  check: <path d="M3 8.5 6.5 12 13 4.5" />,
  cross: <path d="M4 4l8 8M12 4l-8 8" />,
  alert: <><path d="M8 4v5" /><path d="M8 11.5v.5" /></>,
  clock: <><circle cx="8" cy="8" r="5.5" /><path d="M8 5v3.2l2 1.3" /></>,
  spin: <><path d="M13 8a5 5 0 1 1-2.2-4.1" /><path d="M11.3 1.8l-.5 2.3 2.3.4" /></>,
  dots: <><circle cx="4" cy="8" r=".6" /><circle cx="8" cy="8" r=".6" /><circle cx="12" cy="8" r=".6" /></>,
  link: <><path d="M6.8 9.2a2.6 2.6 0 0 0 3.7 0l2.1-2.1a2.6 2.6 0 0 0-3.7-3.7l-.8.8" /><path d="M9.2 6.8a2.6 2.6 0 0 0-3.7 0L3.4 8.9a2.6 2.6 0 0 0 3.7 3.7l.8-.8" /></>,
  folder: <path d="M2.5 4.5h4l1.5 1.5h5.5v6.5h-11z" />,
  chevron: <path d="M4.5 6.5 8 10l3.5-3.5" />,
} satisfies Record<string, ReactNode>;
export type IconName = keyof typeof PATHS;

export function Icon({ name, label, className }: { name: IconName; label?: string; className?: string }) {
  return (
    <svg className={`icon${className ? ` ${className}` : ''}`} viewBox="0 0 16 16" width="16" height="16" fill="none" stroke="currentColor" strokeWidth="1.6" strokeLinecap="round" strokeLinejoin="round"
      {...(label ? { role: 'img', 'aria-label': label } : { 'aria-hidden': true, focusable: false })}>
      {label && <title>{label}</title>}
      {PATHS[name]}
    </svg>
  );
}
