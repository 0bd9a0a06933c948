import MajlisProtocol

/// A client's side of the media binding (docs/protocol.md section 12): builds the signed STUN
/// binding requests, and reads the answers. When the server answers 401 with a NONCE (the
/// address is new to it), the client sends the binding again at once with that nonce; the
/// server moves its media to the address only then.
public struct MediaBinding: Sendable {
    /// What an answer from the server meant.
    public enum Answer: Sendable, Equatable {
        /// Bound: the server sends media to this address; the port it saw.
        case bound(mappedPort: UInt16?)
        /// The server wants proof of the address: send `request` again now (it carries the nonce).
        case challenged
        /// Not an answer to us (wrong key, not a binding answer): ignore it.
        case ignored
    }

    public let ssrc: UInt32
    public let key: [UInt8]
    /// Say that this client decodes RED, and that it plays packets of several frames.
    public var receivesRED: Bool
    public var receivesMultiframe: Bool
    /// The server's latest nonce for this address, sent with every request.
    public private(set) var nonce: [UInt8]?

    public init(ssrc: UInt32, key: [UInt8], receivesRED: Bool, receivesMultiframe: Bool = false) {
        self.ssrc = ssrc
        self.key = key
        self.receivesRED = receivesRED
        self.receivesMultiframe = receivesMultiframe
    }

    /// A signed binding request with `transactionId` (12 bytes).
    public func request(transactionId: [UInt8]) -> [UInt8] { request(transactionId: transactionId, probe: nil) }

    /// A binding request that is one packet of a probe train, padded to `size` bytes in all
    /// (its UDP payload; at least what the request needs).
    public func probe(_ probe: UplinkProbe, transactionId: [UInt8], size: Int) -> [UInt8] {
        let plain = request(transactionId: transactionId, probe: nil).count
        let length = max(8, (size - plain - 4) / 4 * 4)
        return request(transactionId: transactionId, probe: probe.value(length: length))
    }

    private func request(transactionId: [UInt8], probe: [UInt8]?) -> [UInt8] {
        var attributes = [STUNMessage.Attribute(type: STUNMessage.AttributeType.username.rawValue, value: Array(String(ssrc).utf8))]
        if receivesRED { attributes.append(.init(type: STUNMessage.AttributeType.receivesRED.rawValue, value: [])) }
        if receivesMultiframe { attributes.append(.init(type: STUNMessage.AttributeType.receivesMultiframe.rawValue, value: [])) }
        if let nonce { attributes.append(.init(type: STUNMessage.AttributeType.nonce.rawValue, value: nonce)) }
        if let probe { attributes.append(.init(type: STUNMessage.AttributeType.probe.rawValue, value: probe)) }
        return STUNIntegrity.sign(STUNMessage(type: .bindingRequest, transactionId: transactionId, attributes: attributes), key: key)
    }

    /// A new transaction id.
    public static func transactionId() -> [UInt8] { HMACSHA256.randomBytes(12) }

    /// Reads a STUN datagram from the server.
    public mutating func receive(_ packet: [UInt8]) -> Answer {
        guard STUNIntegrity.verify(packet, key: key), let message = try? STUNMessage(parsing: packet) else { return .ignored }
        switch message.type {
        case STUNMessage.MessageType.bindingSuccess.rawValue:
            let mapped = message.attribute(.xorMappedAddress).flatMap(STUNMessage.decodeXorMappedAddress)
            return .bound(mappedPort: mapped?.port)
        case STUNMessage.MessageType.bindingError.rawValue:
            guard message.errorCode == 401, let nonce = message.attribute(.nonce), nonce != self.nonce else { return .ignored }
            self.nonce = nonce
            return .challenged
        default:
            return .ignored
        }
    }

    /// Forgets the nonce (a new socket: the server will challenge the new address).
    public mutating func reset() { nonce = nil }
}
