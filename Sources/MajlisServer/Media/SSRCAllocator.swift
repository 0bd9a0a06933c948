import MajlisForwarding
import MajlisTransport

/// Hands out the SSRCs members and pre-call tests send under on this node: in turn from a
/// random start within `range`, never one in use, never one the server sends under itself
/// (`MediaSettings.serverSSRC`, the seat tracks browsers receive, `WebRTCParameters.trackSSRC`).
/// Two members under one SSRC would have the router take one's packets for the other's.
struct SSRCAllocator {
    /// Where members' SSRCs lie: 1.9 billion, so a value is used again only after that many
    /// joins on one node, and only if free.
    static let range: ClosedRange<UInt32> = 0x1000_0000...0x7FFF_FFFF
    private var last: UInt32
    /// Held now: at most one for each member of a room and each pre-call test on the node.
    private(set) var inUse: Set<UInt32> = []

    /// Allocates after `start`; `inUse` are held already.
    init(start: UInt32 = .random(in: range), inUse: Set<UInt32> = []) {
        last = start
        self.inUse = inUse
    }

    /// A free SSRC, now in use.
    mutating func allocate() -> UInt32 {
        repeat {
            last = last >= Self.range.upperBound ? Self.range.lowerBound : last + 1
        } while inUse.contains(last) || Self.isReserved(last)
        inUse.insert(last)
        return last
    }

    /// `ssrc` is free again.
    mutating func release(_ ssrc: UInt32) {
        inUse.remove(ssrc)
    }

    /// Whether the server sends under `ssrc` itself.
    static func isReserved(_ ssrc: UInt32) -> Bool {
        ssrc == MediaSettings.serverSSRC || ssrc & 0xFFFF_0000 == WebRTCParameters.trackSSRC(seat: 0)
    }
}
