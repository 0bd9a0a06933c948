// Everything MajlisKit's public API uses is reachable with `import MajlisKit` alone: the wire
// types (RoomSettings, Seat, RoomSnapshot, ...), the resource packs' format (PackManifest,
// PackItem, ...) and, where the live media engine exists, its audio sources and sinks.
@_exported import MajlisPacks
@_exported import MajlisProtocol

#if os(Linux)
@_exported import MajlisAudio
#endif
