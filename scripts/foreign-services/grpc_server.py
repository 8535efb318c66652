"""A gRPC server on grpcio (the reference implementation, not ours) for iolab's gRPC tests
(crates/loadgen/tests/grpc.rs, crates/cli/tests/grpc.rs) and scripts/bench-grpc:
greeter.proto's Greeter, compiled at start by grpcio-tools, with the server reflection
service unless --no-reflection. Prints "listening on PORT" once serving. Its streaming
methods (Ticks: server-streaming, Echo: bidirectional) each hold a worker thread while open,
grpcio's sync server being a thread per call: --workers bounds the calls held at once.

    grpc_server.py --port 0 [--workers 16] [--no-reflection] [--tls CERT KEY]
"""
import argparse
import os
import sys
import time
from concurrent import futures

import grpc
from grpc_reflection.v1alpha import reflection

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
protos, services = grpc.protos_and_services("greeter.proto")


class Greeter(services.GreeterServicer):
    def SayHello(self, request, context):
        if request.delay_ms:
            time.sleep(request.delay_ms / 1000.0)
        return protos.HelloReply(message="Hello " + request.name)

    def Fail(self, request, context):
        if request.code == 0:
            return protos.HelloReply(message="ok")
        context.abort(_status(request.code), "failed as asked")

    def Chatter(self, request, context):
        for _ in range(3):
            yield protos.HelloReply(message=request.name)

    def Ticks(self, request, context):
        if request.code and not request.count:
            context.abort(_status(request.code), "refused as asked")
        context.send_initial_metadata(())
        seq = 0
        while context.is_active() and (request.count == 0 or seq < request.count):
            yield protos.Tick(seq=seq, sent_unix_us=time.time_ns() // 1000)
            seq += 1
            time.sleep(request.every_ms / 1000.0)
        if request.code:
            context.abort(_status(request.code), "ended as asked")

    def Echo(self, request_iterator, context):
        for ping in request_iterator:
            yield protos.Ping(seq=ping.seq, text=ping.text)


def _status(code):
    for s in grpc.StatusCode:
        if s.value[0] == code:
            return s
    return grpc.StatusCode.UNKNOWN


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--workers", type=int, default=16)
    ap.add_argument("--no-reflection", action="store_true")
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    args = ap.parse_args()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=args.workers))
    services.add_GreeterServicer_to_server(Greeter(), server)
    if not args.no_reflection:
        names = (protos.DESCRIPTOR.services_by_name["Greeter"].full_name, reflection.SERVICE_NAME)
        reflection.enable_server_reflection(names, server)
    addr = "127.0.0.1:%d" % args.port
    if args.tls:
        with open(args.tls[0], "rb") as c, open(args.tls[1], "rb") as k:
            creds = grpc.ssl_server_credentials([(k.read(), c.read())])
        port = server.add_secure_port(addr, creds)
    else:
        port = server.add_insecure_port(addr)
    server.start()
    print("listening on %d" % port, flush=True)
    server.wait_for_termination()


if __name__ == "__main__":
    main()
