from google.protobuf import empty_pb2 as _empty_pb2
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Mapping as _Mapping, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ConnInfo(_message.Message):
    __slots__ = ["address", "knock", "network", "service_id"]
    class Knock(_message.Message):
        __slots__ = ["ack", "error", "knock"]
        ACK_FIELD_NUMBER: _ClassVar[int]
        ERROR_FIELD_NUMBER: _ClassVar[int]
        KNOCK_FIELD_NUMBER: _ClassVar[int]
        ack: bool
        error: str
        knock: bool
        def __init__(self, knock: bool = ..., ack: bool = ..., error: _Optional[str] = ...) -> None: ...
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    KNOCK_FIELD_NUMBER: _ClassVar[int]
    NETWORK_FIELD_NUMBER: _ClassVar[int]
    SERVICE_ID_FIELD_NUMBER: _ClassVar[int]
    address: str
    knock: ConnInfo.Knock
    network: str
    service_id: int
    def __init__(self, service_id: _Optional[int] = ..., network: _Optional[str] = ..., address: _Optional[str] = ..., knock: _Optional[_Union[ConnInfo.Knock, _Mapping]] = ...) -> None: ...

class Empty(_message.Message):
    __slots__ = []
    def __init__(self) -> None: ...

class StdioData(_message.Message):
    __slots__ = ["channel", "data"]
    class Channel(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
        __slots__ = []
    CHANNEL_FIELD_NUMBER: _ClassVar[int]
    DATA_FIELD_NUMBER: _ClassVar[int]
    INVALID: StdioData.Channel
    STDERR: StdioData.Channel
    STDOUT: StdioData.Channel
    channel: StdioData.Channel
    data: bytes
    def __init__(self, channel: _Optional[_Union[StdioData.Channel, str]] = ..., data: _Optional[bytes] = ...) -> None: ...
