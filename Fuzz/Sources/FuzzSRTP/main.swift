import FuzzDriver
import MajlisProtocol
import MajlisTransport

private let key = [UInt8](0..<30)
nonisolated(unsafe) private var inbound = try! SRTPTransform(key: key, direction: .inbound)
nonisolated(unsafe) private var outbound = try! SRTPTransform(key: key, direction: .outbound)

/// Any bytes through the router's SRTP path: unprotected as SRTP and as SRTCP (rejected or
/// accepted, never a crash or an overrun); and, when they are a well-formed RTP or RTCP packet,
/// protected and unprotected again to the same bytes.
@_cdecl("LLVMFuzzerTestOneInput")
func fuzzSRTP(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: bytes, count: count))
    var buffer = input + [UInt8](repeating: 0, count: 16)
    _ = buffer.withUnsafeMutableBytes { try? inbound.unprotect(srtpIn: $0, length: input.count) }
    _ = try? inbound.unprotect(srtcp: input)
    if let rtp = try? RTPPacket(parsing: input) {
        let plain = rtp.serialized()
        if let secured = try? outbound.protect(rtp: plain), let back = try? inbound.unprotect(srtp: secured) {
            precondition(back == plain)
        }
    }
    if input.count >= 8, input[0] >> 6 == 2, (try? RTCPPacket.parseCompound(input)) != nil,
        let secured = try? outbound.protect(rtcp: input), let back = try? inbound.unprotect(srtcp: secured)
    {
        precondition(back == input)
    }
    return 0
}


runFuzzer(fuzzSRTP)
