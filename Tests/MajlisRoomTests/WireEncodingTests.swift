import Foundation
import MajlisProtocol
import MajlisRoom
import Testing

/// Everything a room says (answers, events, snapshots) over random ops is written by the
/// streaming encoder as JSONEncoder writes it.
@Suite struct WireEncodingTests {
    @Test func streamedAsJSONEncoderWritesIt() throws {
        var rng = SplitMix64(seed: 20_261_202)
        var engine = RoomEngine(id: "r", settings: RoomSettings(seatCount: 6), owner: "u0", now: 0)
        var now: Int64 = 0
        let reference = JSONEncoder()
        reference.outputFormatting = .withoutEscapingSlashes
        var compared = 0
        func same(_ value: some Encodable) throws {
            let ours = try JSONDecoder().decode(JSONValue.self, from: try StreamingJSONEncoder.encode(value))
            let theirs = try JSONDecoder().decode(JSONValue.self, from: try reference.encode(value))
            #expect(ours == theirs)
            compared += 1
        }
        for _ in 0..<1_500 {
            now += Int64.random(in: 0...400, using: &rng)
            let user = RandomizedTests.users.randomElement(using: &rng)!
            let command = RandomizedTests.randomCommand(&rng, engine: engine)
            if command == .end { continue }
            let outcome = engine.handle(command, from: Caller(id: user, name: "\(user) \"ü\"", grants: Grants(create: false, admin: user == "u23")), now: now)
            switch outcome.reply {
            case .success(let reply): try same(reply)
            case .failure(let error): try same(error)
            }
            for delivery in outcome.deliveries { try same(EventFrame(room: "r", seq: delivery.seq, event: delivery.event)) }
            if Int.random(in: 0..<20, using: &rng) == 0 { try same(engine.snapshot(for: user, now: now)) }
        }
        #expect(compared > 1_500)
    }
}
