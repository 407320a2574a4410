// The signed-in user in the header (a file, not an inline script: the pages' CSP runs none).
import { showWho } from "./who.js";

showWho();
