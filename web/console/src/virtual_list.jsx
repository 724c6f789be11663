// A list that renders only the rows in view (plus a few), so 10,000 calls or 1,000 tools scroll
// without jank: every row has the same height, the list's full height is kept by the inner box.
import { useEffect, useRef, useState } from "preact/hooks";

// A new `resetKey` (a new search, other filters) starts the list at its top again.
export function VirtualList({ items, rowHeight, height, renderRow, label, keyOf, resetKey }) {
  const box = useRef(null);
  const [top, setTop] = useState(0);
  useEffect(() => {
    if (box.current) box.current.scrollTop = 0;
    setTop(0);
  }, [resetKey]);
  const first = Math.max(0, Math.floor(top / rowHeight) - 5);
  const last = Math.min(items.length, Math.ceil((top + height) / rowHeight) + 5);
  const rows = [];
  for (let i = first; i < last; i++) {
    rows.push(
      <li
        key={keyOf(items[i], i)}
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
