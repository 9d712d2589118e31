# Probe an HTTP server with the torture inputs of the gateway suite (bench/http-library/README.md).
import socket,sys
port=int(sys.argv[1])
def raw(data,t=2):
    s=socket.create_connection(("127.0.0.1",port)); s.settimeout(t)
    out=b""
    try:
        s.sendall(data); 
        while True:
            x=s.recv(65536)
            if not x: break
            out+=x
    except Exception as e: out+=b" <"+type(e).__name__.encode()+b">"
    s.close(); return out
G=b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
P=b"POST /sync HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcd"
cases={
 "pipelined GET+POST": G+P, "pipelined POST+GET": P+G, "pipelined 10 mixed": (G+P)*5,
 "duplicate CL": b"POST /s HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nContent-Length: 4\r\n\r\nabcd",
 "conflicting CL": b"POST /s HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nContent-Length: 40\r\n\r\nabcd",
 "CL+TE": b"POST /s HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n0\r\n\r\n",
 "chunked": b"POST /s HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n0\r\n\r\n",
 "NUL in URL": b"GET /he\x00al HTTP/1.1\r\nHost: x\r\n\r\n",
 "CTL in header": b"GET /h HTTP/1.1\r\nHost: x\x01y\r\n\r\n",
 "header 9000 B": b"GET /h HTTP/1.1\r\nHost: x\r\nX-Foo: "+b"a"*9000+b"\r\n\r\n",
 "header 40000 B": b"GET /h HTTP/1.1\r\nHost: x\r\nX-Foo: "+b"a"*40000+b"\r\n\r\n",
 "obs-fold": b"GET /h HTTP/1.1\r\nHost: x\r\nX-Foo: a\r\n b\r\n\r\n",
 "CL -4": b"POST /s HTTP/1.1\r\nHost: x\r\nContent-Length: -4\r\n\r\nabcd",
}
for k,v in cases.items():
    o=raw(v)
    print("%-20s %d responses: %s" % (k, o.count(b"HTTP/1.1 "), b" | ".join(l for l in o.split(b"\r\n") if l.startswith(b"HTTP/1.1") or l.startswith(b"{"))[:220]))
