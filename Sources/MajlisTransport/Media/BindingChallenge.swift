import MajlisProtocol

/// The server's proof that a new media address can receive (docs/protocol.md section 12): a
/// member's media moves to an address only after a binding from it returns a nonce the server
/// sent to that very address. A binding replayed from elsewhere, or sent with a forged source
/// address, never sees the nonce for its address, so it cannot move anyone's media.
///
/// Stateless: a nonce is the time window and an HMAC of (window, SSRC, address) under a secret
/// made at start; one is accepted in its window (30 s) and the next.
public struct BindingChallenge: Sendable {
    /// How long a nonce's window is, in milliseconds.
    public static let window: Int64 = 30_000
    private let secret: [UInt8]

    public init(secret: [UInt8] = HMACSHA256.randomBytes(32)) {
        self.secret = secret
    }

    /// The nonce for `ssrc` binding from `address` at `now` (Unix or monotonic milliseconds).
    public func nonce(ssrc: UInt32, address: UDPAddress, now: Int64) -> [UInt8] {
        nonce(ssrc: ssrc, address: address, windowIndex: UInt32(truncatingIfNeeded: now / Self.window))
    }

    /// Whether `nonce` was made for `ssrc` at `address`, in this window or the one before.
    public func verify(_ nonce: [UInt8], ssrc: UInt32, address: UDPAddress, now: Int64) -> Bool {
        guard nonce.count == 20 else { return false }
        let index = UInt32(nonce[0]) << 24 | UInt32(nonce[1]) << 16 | UInt32(nonce[2]) << 8 | UInt32(nonce[3])
        let current = UInt32(truncatingIfNeeded: now / Self.window)
        guard index == current || index &+ 1 == current else { return false }
        return HMACSHA256.equal(self.nonce(ssrc: ssrc, address: address, windowIndex: index), nonce)
    }

    private func nonce(ssrc: UInt32, address: UDPAddress, windowIndex: UInt32) -> [UInt8] {
        var message: [UInt8] = []
        message.put32(windowIndex)
        message.put32(ssrc)
        message.put32(address.address)
        message.put16(address.port)
        var nonce: [UInt8] = []
        nonce.put32(windowIndex)
        return nonce + HMACSHA256.mac(key: secret, message: message).prefix(16)
    }
}
