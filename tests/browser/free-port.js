'use strict';
// Prints a TCP port on 127.0.0.1 that was free a moment ago.
const s = require('node:net').createServer();
s.listen(0, '127.0.0.1', () => {
  const { port } = s.address();
  s.close(() => console.log(port));
});
