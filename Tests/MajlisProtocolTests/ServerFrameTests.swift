import Foundation
import MajlisProtocol
import Testing

/// What a client reads of the server's frames, from the frames the server's own types write and
/// from frames with their keys in another order.
@Suite struct ServerFrameTests {
    @Test func answersAndEventsAreReadWhateverTheKeyOrder() throws {
        let hosted = ProtocolError(.conflict, "room r is on node b", host: .init(node: "b", signaling: "wss://b/v1/signal"))
        let written: [(Data, ServerFrame)] = [
            (try JSONEncoder().encode(ResponseFrame(re: 7, data: ["seat": 2])), .answer(re: 7, .success(.object(["seat": .int(2)])))),
            (try JSONEncoder().encode(ResponseFrame(re: Int64.min, error: hosted)), .answer(re: Int64.min, .failure(hosted))),
            (Data(#"{"ok":true,"data":{},"re":-9223372036854775807}"#.utf8), .answer(re: Int64.min + 1, .success(.object([:])))),
            (Data(#"{"error":{"message":"slow down","code":"rate_limited"},"ok":false,"re":3}"#.utf8),
             .answer(re: 3, .failure(ProtocolError(.rateLimited, "slow down")))),
            // A code from a newer server reads as `internal`, its message kept.
            (Data(#"{"re":4,"ok":false,"error":{"code":"future_code","message":"m"}}"#.utf8), .answer(re: 4, .failure(ProtocolError(.internal, "m")))),
            (Data(#"{"re":5,"ok":true}"#.utf8), .answer(re: 5, .success(.object([:])))),
        ]
        for (frame, expected) in written {
            #expect(ServerFrame(parsing: frame) == expected, "\(String(decoding: frame, as: UTF8.self))")
        }
        let event = try JSONEncoder().encode(EventFrame(room: nil, seq: nil, event: .tokenExpiring(expiresAt: 9)))
        guard case .event(let name, let value) = ServerFrame(parsing: event) else {
            Issue.record("not read as an event")
            return
        }
        #expect(name == "token.expiring")
        #expect(try JSONValueDecoder().decode(EventFrame.self, from: value).event == .tokenExpiring(expiresAt: 9))
        let reordered = Data(#"{"data":{"expiresAt":9},"ev":"token.expiring"}"#.utf8)
        #expect(ServerFrame(parsing: reordered).map { if case .event(let name, _) = $0 { name } else { "" } } == "token.expiring")
    }

    @Test func whatIsNeitherIsNothing() {
        for frame in [#"{"id":1,"op":"hello"}"#, "not json", #"{"re":"7","ok":true}"#, "[]", ""] {
            #expect(ServerFrame(parsing: Data(frame.utf8)) == nil, "\(frame)")
        }
    }
}
