import MajlisProtocol
import MajlisTransport

/// The STUN side of ICE-lite (RFC 8445 sections 2.5 and 7.3, RFC 7675): the server answers
/// connectivity checks, and sends a check of its own only to prove that a new address of a
/// browser's can receive (`probe`) before media goes there. A check is a binding request whose USERNAME is
/// `serverUfrag:peerUfrag`, signed (MESSAGE-INTEGRITY) with the server's password and ending
/// in a FINGERPRINT; the answer carries XOR-MAPPED-ADDRESS, MESSAGE-INTEGRITY and FINGERPRINT.
public enum ICELite {
    /// A valid check.
    public struct Check: Sendable, Equatable {
        public var peerUfrag: String
        /// USE-CANDIDATE: the controlling peer nominates this path.
        public var nominated: Bool
        public var transactionId: [UInt8]
    }

    /// The server ufrag a binding request is addressed to (before the colon of USERNAME), if it
    /// has that form.
    public static func localUfrag(of request: STUNMessage) -> String? {
        guard let name = request.username, let colon = name.firstIndex(of: ":") else { return nil }
        return String(name[..<colon])
    }

    /// `raw` checked as a connectivity check to `local`: nil unless it is a binding request for
    /// `local.ufrag`, signed with `local.password`, with a valid FINGERPRINT.
    public static func check(_ raw: [UInt8], request: STUNMessage, local: ICECredentials) -> Check? {
        guard request.type == STUNMessage.MessageType.bindingRequest.rawValue, let name = request.username,
            let colon = name.firstIndex(of: ":"), name[..<colon] == local.ufrag, STUNMessage.hasValidFingerprint(raw),
            STUNIntegrity.verify(raw, key: Array(local.password.utf8))
        else { return nil }
        return Check(
            peerUfrag: String(name[name.index(after: colon)...]), nominated: request.attribute(.useCandidate) != nil,
            transactionId: request.transactionId)
    }

    /// The success answer to check `transactionId` that came from `from`.
    public static func success(transactionId: [UInt8], from: UDPAddress, local: ICECredentials) -> [UInt8] {
        let answer = STUNMessage(
            type: .bindingSuccess, transactionId: transactionId,
            attributes: [.init(type: STUNMessage.AttributeType.xorMappedAddress.rawValue, value: STUNMessage.xorMappedAddress(ipv4: from.octets, port: from.port))])
        return STUNMessage.appendingFingerprint(STUNIntegrity.sign(answer, key: Array(local.password.utf8)))
    }

    /// The server's check to a browser at an address it has not yet proven: USERNAME
    /// `peerUfrag:localUfrag`, ICE-CONTROLLED (the server is the lite, controlled agent), signed
    /// with the browser's password. Only the browser that holds that password, at that address,
    /// can answer it.
    public static func probe(transactionId: [UInt8], peer: ICECredentials, localUfrag: String, tieBreaker: [UInt8]) -> [UInt8] {
        let message = STUNMessage(
            type: .bindingRequest, transactionId: transactionId,
            attributes: [
                .init(type: STUNMessage.AttributeType.username.rawValue, value: Array("\(peer.ufrag):\(localUfrag)".utf8)),
                .init(type: STUNMessage.AttributeType.priority.rawValue, value: [0x7E, 0x00, 0x1E, 0xFF]),
                .init(type: STUNMessage.AttributeType.iceControlled.rawValue, value: tieBreaker),
            ])
        return STUNMessage.appendingFingerprint(STUNIntegrity.sign(message, key: Array(peer.password.utf8)))
    }

    /// A controlling peer's check to `remote` (for clients Majlis runs itself: tests, benchmarks).
    public static func request(transactionId: [UInt8], remote: ICECredentials, localUfrag: String, nominate: Bool) -> [UInt8] {
        var attributes: [STUNMessage.Attribute] = [
            .init(type: STUNMessage.AttributeType.username.rawValue, value: Array("\(remote.ufrag):\(localUfrag)".utf8)),
            .init(type: STUNMessage.AttributeType.priority.rawValue, value: [0x6E, 0x00, 0x1E, 0xFF]),
            .init(type: STUNMessage.AttributeType.iceControlling.rawValue, value: HMACSHA256.randomBytes(8)),
        ]
        if nominate { attributes.append(.init(type: STUNMessage.AttributeType.useCandidate.rawValue, value: [])) }
        let message = STUNMessage(type: .bindingRequest, transactionId: transactionId, attributes: attributes)
        return STUNMessage.appendingFingerprint(STUNIntegrity.sign(message, key: Array(remote.password.utf8)))
    }

    /// Whether `raw` is a success answer from `remote` (signed with its password, fingerprinted).
    public static func isSuccess(_ raw: [UInt8], remote: ICECredentials) -> Bool {
        guard let message = try? STUNMessage(parsing: raw), message.type == STUNMessage.MessageType.bindingSuccess.rawValue else { return false }
        return STUNMessage.hasValidFingerprint(raw) && STUNIntegrity.verify(raw, key: Array(remote.password.utf8))
    }
}
