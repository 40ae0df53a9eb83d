"""Run the component plugin as the engine does, and stand in for the engine and its resource monitor.

`python provider <engine address>` is how the Python language host starts a source-based plugin
(RunPlugin: `python <plugin dir> <args>`); it prints the port of its provider server. Construct
needs a resource monitor to register the component's children with: `FakeMonitor` serves one over
gRPC and answers from the project's recording mocks (tests/support/pulumi_mocks.py), so a remote
Construct and a local Python program can be compared registration by registration.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from concurrent import futures
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime.proto import (
    engine_pb2,
    engine_pb2_grpc,
    provider_pb2,
    provider_pb2_grpc,
    resource_pb2,
    resource_pb2_grpc,
)

from tests.support.pulumi_mocks import RecordingMonitor

REPO = Path(__file__).resolve().parents[2]
PROVIDER = REPO / "provider"


class FakeEngine(engine_pb2_grpc.EngineServicer):
    """The engine's log and root-resource service; keeps what the plugin logs."""

    def __init__(self) -> None:
        self.logs: list[str] = []
        self.root = ""

    def Log(self, request: Any, context: Any) -> Any:
        self.logs.append(request.message)
        return empty_pb2.Empty()

    def GetRootResource(self, request: Any, context: Any) -> Any:
        return engine_pb2.GetRootResourceResponse(urn=self.root)

    def SetRootResource(self, request: Any, context: Any) -> Any:
        self.root = request.urn
        return engine_pb2.SetRootResourceResponse()


class FakeMonitor(resource_pb2_grpc.ResourceMonitorServicer):
    """The resource monitor over gRPC, answering from a RecordingMonitor (which records each registration)."""

    def __init__(self, monitor: RecordingMonitor) -> None:
        self.monitor = monitor

    def SupportsFeature(self, request: Any, context: Any) -> Any:
        return resource_pb2.SupportsFeatureResponse(hasSupport=self.monitor.SupportsFeature(request).hasSupport)

    def GetDeploymentInfo(self, request: Any, context: Any) -> Any:
        return self.monitor.GetDeploymentInfo(request)

    def RegisterResource(self, request: Any, context: Any) -> Any:
        return self.monitor.RegisterResource(request)

    def RegisterResourceOutputs(self, request: Any, context: Any) -> Any:
        return empty_pb2.Empty()

    def Invoke(self, request: Any, context: Any) -> Any:
        return self.monitor.Invoke(request)

    def RegisterPackage(self, request: Any, context: Any) -> Any:
        return self.monitor.RegisterPackage(request)

    def SignalAndWaitForShutdown(self, request: Any, context: Any) -> Any:
        return empty_pb2.Empty()


@contextmanager
def servers(monitor: RecordingMonitor) -> Iterator[tuple[str, str, FakeEngine]]:
    """A fake engine and a fake monitor on local ports: (engine address, monitor address, engine)."""
    engine = FakeEngine()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=8))
    engine_pb2_grpc.add_EngineServicer_to_server(engine, server)
    resource_pb2_grpc.add_ResourceMonitorServicer_to_server(FakeMonitor(monitor), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    try:
        address = f"127.0.0.1:{port}"
        yield address, address, engine
    finally:
        server.stop(grace=None)


@contextmanager
def plugin(engine_address: str) -> Iterator[Any]:
    """The plugin process, started as the language host starts it; yields a ResourceProvider stub."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    process = subprocess.Popen(
        [sys.executable, str(PROVIDER), engine_address],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=REPO,
        env=env,
    )
    try:
        line = process.stdout.readline().decode().strip() if process.stdout else ""
        if not line.isdigit():
            process.kill()
            _, err = process.communicate(timeout=10)
            raise AssertionError(f"the plugin printed {line!r} instead of its port:\n{err.decode()}")
        channel = grpc.insecure_channel(f"127.0.0.1:{line}")
        grpc.channel_ready_future(channel).result(timeout=30)
        try:
            yield provider_pb2_grpc.ResourceProviderStub(channel)
        finally:
            channel.close()
    finally:
        process.kill()
        process.wait(timeout=10)


def schema(stub: Any) -> dict[str, Any]:
    """The plugin's schema, from GetSchema."""
    return json.loads(stub.GetSchema(provider_pb2.GetSchemaRequest(version=0)).schema)


def struct(value: dict[str, Any]) -> struct_pb2.Struct:
    """Plain data as the protobuf Struct the engine sends."""
    out = struct_pb2.Struct()
    out.update(value)
    return out


def construct(
    monitor: RecordingMonitor,
    type_: str,
    name: str,
    inputs: dict[str, Any],
    *,
    project: str = "gpu-training",
    providers: dict[str, str] | None = None,
    timeout: float = 300,
) -> Any:
    """Start the plugin against a fake engine and `monitor`, and call Construct as the engine does for a
    component declared in another language's program (at the root of its `dev` stack); the response."""
    stack_urn = f"urn:pulumi:dev::{project}::pulumi:pulumi:Stack::{project}-dev"
    with servers(monitor) as (engine, monitor_address, _), plugin(engine) as stub:
        request = provider_pb2.ConstructRequest(
            project=project,
            stack="dev",
            organization="organization",
            monitorEndpoint=monitor_address,
            type=type_,
            name=name,
            parent=stack_urn,
            inputs=struct(inputs),
            providers=providers or {},
            dryRun=False,
            parallel=4,
        )
        return stub.Construct(request, timeout=timeout)
