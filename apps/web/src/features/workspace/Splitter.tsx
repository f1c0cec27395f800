import { useRef, type KeyboardEvent, type PointerEvent } from 'react';

/** Share of the width one arrow key press moves a splitter (Shift: five times as far). */
export const KEY_STEP = 0.02;

/**
 * A vertical splitter between two panels (WAI-ARIA window splitter): drag it with the pointer, or
 * focus it (Tab) and use Left/Right (Shift for bigger steps), Home/End for the extremes.
 * `onMove` gets the change as a share of `container`'s width; `onDone` fires when a drag or key
 * press ends (the layout is then saved).
 */
export function Splitter({
  label,
  percent,
  controls,
  container,
  onMove,
  onDone,
  testId,
}: {
  /** e.g. "Resize FX tiles and Blotter". */
  label: string;
  /** Position in percent of the width (aria-valuenow). */
  percent: number;
  /** Id of the panel on its left. */
  controls: string;
  container: () => HTMLElement | null;
  onMove(deltaShare: number): void;
  onDone(): void;
  testId: string;
}) {
  const drag = useRef<{ x: number; width: number } | undefined>(undefined);
  const onPointerDown = (e: PointerEvent<HTMLDivElement>) => {
    const width = container()?.clientWidth ?? 0;
    if (width <= 0 || e.button !== 0) return;
    e.preventDefault();
    e.currentTarget.setPointerCapture(e.pointerId);
    e.currentTarget.focus();
    drag.current = { x: e.clientX, width };
  };
  const onPointerMove = (e: PointerEvent<HTMLDivElement>) => {
    const d = drag.current;
    if (d === undefined) return;
    const dx = e.clientX - d.x;
    if (dx === 0) return;
    d.x = e.clientX;
    onMove(dx / d.width);
  };
  const end = () => {
    if (drag.current === undefined) return;
    drag.current = undefined;
    onDone();
  };
  const onKeyDown = (e: KeyboardEvent<HTMLDivElement>) => {
    const step = e.shiftKey ? KEY_STEP * 5 : KEY_STEP;
    const delta = e.key === 'ArrowLeft' ? -step : e.key === 'ArrowRight' ? step : e.key === 'Home' ? -1 : e.key === 'End' ? 1 : 0;
    if (delta === 0) return;
    e.preventDefault();
    onMove(delta);
    onDone();
  };
  return (
    <div
      className="splitter"
      role="separator"
      aria-orientation="vertical"
      aria-label={label}
      aria-controls={controls}
      aria-valuenow={percent}
      aria-valuemin={0}
      aria-valuemax={100}
      tabIndex={0}
      onPointerDown={onPointerDown}
      onPointerMove={onPointerMove}
      onPointerUp={end}
      onPointerCancel={end}
      onLostPointerCapture={end}
      onKeyDown={onKeyDown}
      data-testid={testId}
    />
  );
}
