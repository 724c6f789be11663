// A list that renders only the rows in view (plus a few), so 10,000 calls or 1,000 tools scroll
// without jank: every row has the same height, the list's full height is kept by the inner box.
//
// Rows are keyed by their slot in the window (index modulo the window's size), not by the item
// they show: scrolling moves the same few elements and rewrites their text, instead of
// removing the rows that left the view and building new ones (a fast scroll through 10,000
// calls replaced every row every frame).
import { useEffect, useRef, useState } from "preact/hooks";

const OVERSCAN = 5;  // rows drawn beyond each edge of the view

// A new `resetKey` (a new search, other filters) starts the list at its top again.
export function VirtualList({ items, rowHeight, height, renderRow, label, resetKey }) {
  const box = useRef(null);
  const [top, setTop] = useState(0);
  useEffect(() => {
    if (box.current) box.current.scrollTop = 0;
    setTop(0);
  }, [resetKey]);
  const first = Math.max(0, Math.floor(top / rowHeight) - OVERSCAN);
  const last = Math.min(items.length, Math.ceil((top + height) / rowHeight) + OVERSCAN);
  // More slots than rows ever drawn at once, so two drawn rows never share one.
  const slots = Math.ceil(height / rowHeight) + 2 * OVERSCAN + 2;
  const rows = [];
  for (let i = first; i < last; i++) {
    rows.push(
      <li
        key={i % slots}
        class="vrow"
        aria-setsize={items.length}
        aria-posinset={i + 1}
        style={{ top: `${i * rowHeight}px`, height: `${rowHeight}px` }}
      >
        {renderRow(items[i], i)}
      </li>,
    );
  }
  return (
    <div class="vlist" ref={box} style={{ height: `${height}px` }} onScroll={(e) => setTop(e.currentTarget.scrollTop)} tabIndex={0} aria-label={label} role="region">
      <ul class="vinner" style={{ height: `${items.length * rowHeight}px` }} aria-label={label}>
        {rows}
      </ul>
    </div>
  );
}
