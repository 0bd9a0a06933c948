import Foundation
import MajlisProtocol
import MajlisTransport
import Synchronization
import Testing

/// A client meets a server that breaks the WebSocket protocol: frames with any opcode, reserved
/// bits, masks, lengths in any form, text that is not UTF-8, fragments out of order, a stream cut
/// short. Whatever arrives, the app goes on: no crash, and only UTF-8 text is delivered.
@Suite struct HostileServerTests {
    @Test func aClientSurvivesWhateverFramesAServerSends() async throws {
        let client = try WebSocketClient()
        defer { client.stop() }
        for seed in 0..<100 {
            var generator = SplitMix64(seed: UInt64(seed))
            let frames = (0..<Int.random(in: 1...5, using: &generator)).map { _ in Self.frame(using: &generator) }
            let server = try RawWebSocketServer(sending: frames)
            let heard = HeardMessages()
            let connection = try client.connect(url: "ws://127.0.0.1:\(server.port)/v1/signal", delegate: heard)
            #expect(await eventually { server.finished.load(ordering: .acquiring) ? true : nil } == true, "seed \(seed)")
            connection.close(code: 1000, reason: "done")
            for message in heard.messages.withLock({ $0 }) {
                #expect(String(validating: message, as: UTF8.self) != nil, "seed \(seed): a message that is not UTF-8 was delivered")
            }
        }
    }

    /// One frame as a hostile server might send it: mostly plausible, sometimes not at all.
    static func frame(using generator: inout SplitMix64) -> [UInt8] {
        let opcode: UInt8 = generator.unit() < 0.9 ? [0, 1, 1, 1, 2, 8, 9, 10, 3, 11].randomElement(using: &generator)! : UInt8.random(in: 0...15, using: &generator)
        let final = generator.unit() < 0.8
        let reserved: UInt8 = generator.unit() < 0.9 ? 0 : UInt8.random(in: 0...7, using: &generator)
        let masked = generator.unit() < 0.05
        let length: Int
        switch generator.unit() {
        case ..<0.5: length = Int.random(in: 0..<126, using: &generator)
        case ..<0.85: length = Int.random(in: 126..<40_000, using: &generator)
        default: length = Int.random(in: 65_536..<150_000, using: &generator)
        }
        var body: [UInt8]
        if generator.unit() < 0.5 {
            let pattern = (0..<min(length, 1_000)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            body = Array(repeatElement(pattern, count: pattern.isEmpty ? 0 : length / pattern.count + 1).joined().prefix(length))
        } else {
            body = Array((Array(#"{"event":"x","data":""#.utf8) + Array(repeating: Array("é".utf8), count: length).joined()).prefix(length))
        }
        var bytes: [UInt8] = [(final ? 0x80 : 0) | reserved << 4 | opcode]
        let mask: UInt8 = masked ? 0x80 : 0
        if body.count < 126 && generator.unit() < 0.95 {
            bytes.append(mask | UInt8(body.count))
        } else if body.count <= 0xFFFF && generator.unit() < 0.9 {
            bytes += [mask | 126, UInt8(body.count >> 8), UInt8(body.count & 0xFF)]
        } else {
            bytes.append(mask | 127)
            bytes += (0..<8).map { UInt8(UInt64(body.count) >> (56 - 8 * UInt64($0)) & 0xFF) }
        }
        if masked { bytes += [0, 0, 0, 0] }
        bytes += body
        if generator.unit() < 0.05 { bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator))) }
        return bytes
    }
}
