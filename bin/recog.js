#!/usr/bin/env node
// The installed `recog` command runs the compiled CLI (npm run build).
await import('../dist/cli/main.js');
