import Foundation
import Testing

@testable import MajlisForwarding
@testable import MajlisTransport

@Suite struct DTLSAssociationTests {
    /// Runs a handshake between `client` and `server`, datagrams passed by hand (`tamper` may
    /// change each one on its way); returns how many datagrams went across.
    @discardableResult
    static func handshake(_ client: DTLSAssociation, _ server: DTLSAssociation, tamper: ([UInt8]) -> [UInt8] = { $0 }) -> Int {
        var toServer = client.start()
        var count = 0
        for _ in 0..<10 where !toServer.isEmpty {
            var toClient: [[UInt8]] = []
            for datagram in toServer { toClient += server.receive(tamper(datagram)) }
            toServer = []
            for datagram in toClient { toServer += client.receive(datagram) }
            count += toClient.count
        }
        return count
    }

    @Test func bothSidesAgreeOnTheSRTPKeysAfterCheckingFingerprints() throws {
        let serverIdentity = try DTLSIdentity(pem: DTLSIdentity.generatePEM())
        let clientIdentity = try DTLSIdentity(pem: DTLSIdentity.generatePEM())
        #expect(serverIdentity.fingerprint != clientIdentity.fingerprint)
        #expect(serverIdentity.fingerprintText.count == 32 * 3 - 1)
        let server = try DTLSAssociation(identity: serverIdentity, peerFingerprint: clientIdentity.fingerprint, role: .server)
        let client = try DTLSAssociation(identity: clientIdentity, peerFingerprint: serverIdentity.fingerprint, role: .client)
        Self.handshake(client, server)
        guard case .connected(let serverIn, let serverOut) = server.state, case .connected(let clientIn, let clientOut) = client.state else {
            Issue.record("not connected: server \(server.state), client \(client.state)")
            return
        }
        #expect(serverIn == clientOut && serverOut == clientIn && serverIn != serverOut && serverIn.count == 30)
        // The keys work: what the client protects, the server unprotects.
        let protect = try SRTPTransform(key: clientOut, direction: .outbound)
        let unprotect = try SRTPTransform(key: serverIn, direction: .inbound)
        let packet: [UInt8] = [0x80, 111, 0, 1, 0, 0, 0, 1, 0, 0, 0, 9, 1, 2, 3]
        #expect(try unprotect.unprotect(srtp: try protect.protect(rtp: packet)) == packet)
    }

    @Test func aCertificateThatDoesNotMatchTheSDPGetsNoKeys() throws {
        let serverIdentity = try DTLSIdentity(pem: DTLSIdentity.generatePEM())
        let clientIdentity = try DTLSIdentity(pem: DTLSIdentity.generatePEM())
        let impostor = try DTLSIdentity(pem: DTLSIdentity.generatePEM())
        let server = try DTLSAssociation(identity: serverIdentity, peerFingerprint: clientIdentity.fingerprint)
        let client = try DTLSAssociation(identity: impostor, peerFingerprint: serverIdentity.fingerprint, role: .client)
        Self.handshake(client, server)
        guard case .failed(let reason) = server.state else {
            Issue.record("the server accepted a certificate the SDP did not name: \(server.state)")
            return
        }
        #expect(reason.contains("does not match"))
    }

    @Test func garbageFailsTheAssociationWithoutCrashing() throws {
        let identity = try DTLSIdentity(pem: DTLSIdentity.generatePEM())
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            let server = try DTLSAssociation(identity: identity, peerFingerprint: identity.fingerprint)
            let length = Int.random(in: 0..<300, using: &generator)
            var junk = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if !junk.isEmpty { junk[0] = 22 }
            _ = server.receive(junk)
            if case .connected = server.state { Issue.record("connected on garbage") }
        }
        // A handshake whose records are corrupted on the way does not connect.
        let server = try DTLSAssociation(identity: identity, peerFingerprint: identity.fingerprint)
        let client = try DTLSAssociation(identity: identity, peerFingerprint: identity.fingerprint, role: .client)
        Self.handshake(client, server) { datagram in
            var bytes = datagram
            if bytes.count > 40 { bytes[bytes.count - 5] ^= 0xFF }
            return bytes
        }
        if case .connected = server.state { Issue.record("connected over corrupted records") }
    }

    @Test func theIdentityIsKeptInTheDataDirectory() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("dtls-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try DTLSIdentity.load(directory: directory)
        let second = try DTLSIdentity.load(directory: directory)
        #expect(first.fingerprint == second.fingerprint)
        #expect(try DTLSIdentity.load(directory: nil).fingerprint != first.fingerprint)
        #expect(throws: MediaError.self) { try DTLSIdentity(pem: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n") }
    }

    @Test func recordsArePackedIntoDatagramsUpToTheMTU() {
        func record(_ size: Int) -> [UInt8] { [22, 0xFE, 0xFD] + [UInt8](repeating: 0, count: 8) + [UInt8(size >> 8), UInt8(size & 0xFF)] + [UInt8](repeating: 7, count: size) }
        let bytes = record(100) + record(200) + record(1_000) + record(50)
        let datagrams = DTLSAssociation.datagrams(fromRecords: bytes, mtu: 1_200)
        #expect(datagrams.map(\.count) == [113 + 213, 1_013 + 63])
        #expect(datagrams.flatMap { $0 } == bytes)
    }
}
