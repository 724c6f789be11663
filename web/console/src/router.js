// Moves to another page of the console ({console}/<page>?<query>) without a reload.
import { consoleBase } from "./api.js";

export function navigate(page, query = "") {
  history.pushState(null, "", new URL(page + (query ? `?${query}` : ""), consoleBase));
  dispatchEvent(new PopStateEvent("popstate"));
}
