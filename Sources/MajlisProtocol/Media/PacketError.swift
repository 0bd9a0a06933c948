/// Why a media packet could not be read.
public enum PacketError: Error, Sendable, Equatable {
    case tooShort(needed: Int, got: Int)
    case badVersion(UInt8)
    case malformed(String)
}
