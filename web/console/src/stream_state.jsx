// What a live view's stream is doing: connecting, live, reconnecting, or refused.
export function StreamState({ state, what }) {
  if (state === "live") return <p class="stream live" role="status">Live</p>;
  if (state === "connecting") return <p class="stream" role="status">Connecting to the {what} stream…</p>;
  if (state === "reconnecting") return <p class="stream warn" role="status">The {what} stream was lost; reconnecting…</p>;
  return (
    <p class="stream error" role="alert">
      The {what} stream was refused: {state.message} {state.suggestion}
    </p>
  );
}
