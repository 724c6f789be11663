// A small time-series chart (uPlot) of the Overview's series: the last hour in step_s buckets.
//
// uPlot is two fifths of the console's script and only the Overview draws charts: it is a
// chunk of its own, read when the first chart is drawn, so the other pages start sooner.
import { useEffect, useRef, useState } from "preact/hooks";
import "uplot/dist/uPlot.min.css";

let uPlotModule = null;
function loadUPlot() {
  uPlotModule ??= import("uplot").then((m) => m.default);
  return uPlotModule;
}

// lines: [{label, values, color}], the values oldest first; the x axis ends at `end` (unix s).
// minTop: the least top of the y axis, so an all-zero series draws a flat line at the bottom.
export function Chart({ title, lines, step, end, unit, minTop = 1, width = 300, height = 110 }) {
  const box = useRef(null);
  const plot = useRef(null);
  const count = lines[0]?.values.length || 0;
  const xs = Array.from({ length: count }, (_, i) => end - (count - 1 - i) * step);
  const data = [xs, ...lines.map((l) => l.values.map((v) => (v === null || v === undefined ? null : v)))];

  const [uPlot, setUPlot] = useState(null);
  useEffect(() => {
    let live = true;
    loadUPlot().then((u) => live && setUPlot(() => u));
    return () => (live = false);
  }, []);

  useEffect(() => {
    if (!uPlot) return undefined;
    plot.current = new uPlot(
      {
        width,
        height,
        legend: { show: false },
        cursor: { show: true, points: { show: false } },
        scales: { x: { time: true }, y: { range: (u, min, max) => [0, Math.max((max || 0) * 1.1, minTop)] } },
        axes: [
          { size: 24, font: "11px system-ui", stroke: "#444", grid: { stroke: "#eee" }, ticks: { show: false }, values: "{HH}:{mm}" },
          { size: 42, font: "11px system-ui", stroke: "#444", grid: { stroke: "#eee" }, ticks: { show: false } },
        ],
        series: [{}, ...lines.map((l) => ({ label: l.label, stroke: l.color, width: 1.5, points: { show: false } }))],
      },
      data,
      box.current,
    );
    return () => {
      plot.current.destroy();
      plot.current = null;
    };
  }, [uPlot, lines.length]);

  useEffect(() => plot.current?.setData(data), [end, lines]);

  const latest = lines.map((l) => `${l.label} ${format(l.values.at(-1))}${unit}`).join(", ");
  return (
    <figure class="chart">
      <figcaption>
        {title}
        <span class="legend">
          {lines.map((l) => (
            <span key={l.label} class={`swatch swatch-${l.key}`}>
              {l.label}
            </span>
          ))}
        </span>
      </figcaption>
      <div ref={box} role="img" aria-label={`${title} over the last hour; latest: ${latest}`} />
    </figure>
  );
}

function format(v) {
  return v === null || v === undefined ? "–" : Number(v.toFixed(2)).toString();
}
