import FuzzDriver
import MajlisProtocol

/// Any bytes as an RTP packet, an RFC 2198 RED payload, a compound RTCP packet and a STUN
/// message: each parses or throws; what parses survives writing and reading again.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzMediaPackets(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: bytes, count: count))
    if let rtp = try? RTPPacket(parsing: input) {
        let again = try? RTPPacket(parsing: rtp.serialized())
        precondition(again?.payload == rtp.payload && again?.sequenceNumber == rtp.sequenceNumber)
    }
    _ = input.withUnsafeBytes { RTPPacket.audioLevel(in: $0, extensionId: 1) }
    if let red = try? REDPayload(parsing: input) {
        precondition((try? REDPayload(parsing: red.serialized()))?.primary == red.primary)
    }
    if let rtcp = try? RTCPPacket.parseCompound(input) {
        precondition((try? RTCPPacket.parseCompound(RTCPPacket.serializeCompound(rtcp))) != nil)
    }
    if let stun = try? STUNMessage(parsing: input) {
        _ = stun.username
        _ = stun.errorCode
        _ = stun.attribute(.xorMappedAddress).flatMap(STUNMessage.decodeXorMappedAddress)
        _ = STUNMessage.integrityInput(input)
        precondition((try? STUNMessage(parsing: stun.serialized())) != nil)
    }
    return 0
}


runFuzzer(fuzzMediaPackets)
