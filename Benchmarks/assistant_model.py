"""A loopback model server for Benchmarks/assistant-latency.sh: answers every
POST .../chat/completions with a short streamed Chat Completions answer (SSE), flushed per
chunk. Writes its port to the file given as its argument."""
import http.server
import json
import sys


def chunk(delta, finish=None):
    body = {"id": "b", "object": "chat.completion.chunk",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return ("data: " + json.dumps(body) + "\n\n").encode()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for part in [chunk({"role": "assistant", "content": "The disk "}), chunk({"content": "is 42% full."}),
                     chunk({}, "stop"), b"data: [DONE]\n\n"]:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(sys.argv[1], "w") as f:
    f.write(str(server.server_address[1]))
server.serve_forever()
