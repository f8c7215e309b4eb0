"""agentplugin.v1: the generated messages (agentplugin_pb2) and gRPC stubs
(agentplugin_pb2_grpc) of proto/agentplugin/v1/agentplugin.proto. Do not
edit the generated modules; run ``make proto``."""
