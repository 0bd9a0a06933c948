import Foundation
import MajlisProtocol
import Testing

@Suite struct RequestDecoderTests {
    func decode(_ text: String) -> RequestDecoder.Outcome { RequestDecoder.decode(Data(text.utf8)) }

    func expectInvalid(_ text: String, re: Int64?, _ code: ErrorCode, sourceLocation: SourceLocation = #_sourceLocation) {
        guard case .invalid(let gotRe, let error) = decode(text) else {
            Issue.record("\(text) decoded", sourceLocation: sourceLocation)
            return
        }
        #expect(gotRe == re, sourceLocation: sourceLocation)
        #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    }

    @Test func decodesEveryShapeOfRequest() {
        #expect(decode(#"{"id":1,"op":"ping"}"#) == .request(IncomingRequest(id: 1, op: "ping", rid: nil, command: .ping)))
        #expect(
            decode(#"{"id":2,"op":"seat.take","rid":"r-1","args":{"room":"r1","index":3}}"#)
                == .request(IncomingRequest(id: 2, op: "seat.take", rid: "r-1", command: .room("r1", .takeSeat(index: 3)))))
        #expect(
            decode(#"{"id":3,"op":"room.join","args":{"room":"r1","create":{"title":"T","seatCount":4,"mode":"request"}}}"#)
                == .request(IncomingRequest(id: 3, op: "room.join", rid: nil, command: .room("r1", .join(create: RoomSettings(title: "T", seatCount: 4, mode: .request))))))
        #expect(
            decode(#"{"id":4,"op":"signal.send","args":{"room":"r1","to":["a","b"],"type":"gift","payload":{"n":1.5}}}"#)
                == .request(IncomingRequest(id: 4, op: "signal.send", rid: nil, command: .room("r1", .sendSignal(to: .users(["a", "b"]), type: "gift", payload: .object(["n": .double(1.5)]))))))
        #expect(
            decode(#"{"id":5,"op":"attr.batch","args":{"room":"r1","ops":[{"op":"delete","keys":["a"]},{"op":"set","attrs":{"b":"1"}}]}}"#)
                == .request(IncomingRequest(id: 5, op: "attr.batch", rid: nil, command: .room("r1", .attributes([.delete(["a"]), .set(["b": "1"], deleteOnLeave: false, updateOwner: false)], force: false, atomic: true)))))
        #expect(
            decode(#"{"id":-9223372036854775808,"op":"hello","args":{"token":"t","resume":"s1","via":"node-a","relay":"mac text"}}"#)
                == .request(IncomingRequest(id: .min, op: "hello", rid: nil, command: .hello(HelloArgs(token: "t", resume: "s1", via: "node-a", relay: "mac text")))))
    }

    @Test func helloNamesItsDeviceWithAnId() {
        #expect(
            decode(#"{"id":1,"op":"hello","args":{"token":"t","device":"phone-1"}}"#)
                == .request(IncomingRequest(id: 1, op: "hello", rid: nil, command: .hello(HelloArgs(token: "t", device: "phone-1")))))
        expectInvalid(#"{"id":2,"op":"hello","args":{"token":"t","device":"my phone"}}"#, re: 2, .badRequest)
    }

    @Test func aMessageIsTextOrACardWithItsFallback() {
        #expect(
            decode(#"{"id":1,"op":"msg.send","args":{"to":"omar","text":"hi","clientMsgId":"c1","replyTo":3,"mentions":["omar","omar"]}}"#)
                == .request(IncomingRequest(id: 1, op: "msg.send", rid: nil, command: .messaging(.send(.user("omar"), MessageDraft(text: "hi", replyTo: 3, mentions: ["omar"], clientMsgId: "c1"))))))
        #expect(
            decode(#"{"id":2,"op":"msg.send","args":{"conversation":"g-1","type":"boat","payload":{"n":1},"fallback":"A boat","clientMsgId":"c2"}}"#)
                == .request(IncomingRequest(id: 2, op: "msg.send", rid: nil, command: .messaging(.send(.conversation("g-1"), MessageDraft(type: "boat", text: nil, payload: ["n": 1], fallback: "A boat", clientMsgId: "c2"))))))
        expectInvalid(#"{"id":3,"op":"msg.send","args":{"to":"omar","type":"boat","clientMsgId":"c3"}}"#, re: 3, .badRequest)
        expectInvalid(#"{"id":4,"op":"msg.send","args":{"to":"omar","clientMsgId":"c4"}}"#, re: 4, .badRequest)
        expectInvalid(#"{"id":5,"op":"msg.send","args":{"text":"hi","clientMsgId":"c5"}}"#, re: 5, .badRequest)
        expectInvalid(#"{"id":6,"op":"msg.sync","args":{"conversation":"g-1","after":-1}}"#, re: 6, .badRequest)
        expectInvalid(#"{"id":7,"op":"conv.invite","args":{"conversation":"g-1","users":[]}}"#, re: 7, .badRequest)
    }

    @Test func precallOpsTakeTheirDefaultsAndRefuseOutOfRangeValues() {
        #expect(decode(#"{"id":1,"op":"echo.start"}"#) == .request(IncomingRequest(id: 1, op: "echo.start", rid: nil, command: .echoStart(delay: 3_000))))
        #expect(decode(#"{"id":2,"op":"echo.start","args":{"delay":10000}}"#) == .request(IncomingRequest(id: 2, op: "echo.start", rid: nil, command: .echoStart(delay: 10_000))))
        #expect(decode(#"{"id":3,"op":"echo.start","args":{"sdp":"v=0"}}"#) == .request(IncomingRequest(id: 3, op: "echo.start", rid: nil, command: .echoStart(delay: 3_000, sdp: "v=0"))))
        #expect(decode(#"{"id":3,"op":"probe.start","args":{"up":64000}}"#) == .request(IncomingRequest(id: 3, op: "probe.start", rid: nil, command: .probeStart(up: 64_000, down: 500_000))))
        expectInvalid(#"{"id":4,"op":"echo.start","args":{"delay":999}}"#, re: 4, .badRequest)
        expectInvalid(#"{"id":5,"op":"probe.start","args":{"down":20000000}}"#, re: 5, .badRequest)
        expectInvalid(#"{"id":6,"op":"probe.start","args":{"up":"fast"}}"#, re: 6, .badRequest)
    }

    @Test func everyOpIsKnown() {
        let expected = [
            "hello", "ping", "session.renew", "bye", "echo.start", "echo.stop", "probe.start", "probe.result", "probe.stop", "room.create", "room.join", "room.leave", "room.sync", "room.update",
            "room.muteChatAll", "room.emoji", "room.end", "seat.take", "seat.leave", "seat.switch", "seat.lock", "seat.mute", "seat.muteAll", "seat.kick",
            "seat.invite", "seat.inviteReply", "seat.emoji", "gift.send", "gift.leaders", "mic.set", "request.create", "request.cancel", "request.accept",
            "request.reject", "member.list", "member.update", "member.role", "member.transferOwner", "member.kick", "member.unban",
            "member.muteChat", "chat.send", "chat.history", "attr.set", "attr.delete", "attr.batch", "signal.send", "webrtc.offer",
            "conv.create", "conv.list", "conv.get", "conv.invite", "conv.remove", "conv.leave", "conv.update", "conv.role", "conv.settings",
            "msg.send", "msg.sync", "msg.read", "msg.typing", "msg.edit", "msg.revoke", "msg.report", "msg.search", "msg.feature", "conv.discover", "conv.join", "conv.requests", "conv.answer", "conv.mute", "user.block", "user.unblock", "user.blocks",
            "presence.get", "presence.share", "log.deliver",
        ]
        #expect(RequestDecoder.ops == expected.sorted())
    }

    @Test func badFramesAreBadRequests() {
        expectInvalid("not json", re: nil, .badRequest)
        expectInvalid("[1,2]", re: nil, .badRequest)
        expectInvalid(#"{"op":"ping"}"#, re: nil, .badRequest)
        expectInvalid(#"{"id":"7","op":"ping"}"#, re: nil, .badRequest)
        expectInvalid(#"{"id":1.5,"op":"ping"}"#, re: nil, .badRequest)
        expectInvalid(#"{"id":7}"#, re: 7, .badRequest)
        expectInvalid(#"{"id":7,"op":5}"#, re: 7, .badRequest)
        expectInvalid(#"{"id":7,"op":"nope"}"#, re: 7, .unsupported)
        expectInvalid(#"{"id":7,"op":"nope","args":5}"#, re: 7, .unsupported)
        expectInvalid(#"{"id":7,"op":"seat.take","args":5}"#, re: 7, .badRequest)
        expectInvalid(#"{"id":7,"op":"seat.take","args":{}}"#, re: 7, .badRequest)
        expectInvalid(#"{"id":7,"op":"seat.take","args":{"room":"r 1"}}"#, re: 7, .badRequest)
        expectInvalid(#"{"id":7,"op":"seat.take","args":{"room":"r","index":"3"}}"#, re: 7, .badRequest)
        expectInvalid(#"{"id":7,"op":"seat.mute","args":{"room":"r","index":1,"muted":1}}"#, re: 7, .badRequest)
        expectInvalid(#"{"id":7,"op":"room.create","args":{"room":"r","seatCount":65}}"#, re: 7, .badRequest)
        expectInvalid(#"{"id":7,"op":"room.create","args":{"room":"r","mode":"open"}}"#, re: 7, .badRequest)
        expectInvalid(#"{"id":7,"op":"member.list","args":{"room":"r","limit":201}}"#, re: 7, .badRequest)
        expectInvalid(#"{"id":7,"op":"chat.history","args":{"room":"r","limit":0}}"#, re: 7, .badRequest)
        expectInvalid(#"{"id":7,"op":"chat.send","args":{"room":"r","text":"x"}}"#, re: 7, .badRequest)
        expectInvalid(#"{"id":7,"op":"chat.send","args":{"room":"r","clientMsgId":"c"}}"#, re: 7, .badRequest)
        expectInvalid(#"{"id":7,"op":"member.role","args":{"room":"r","user":"u","role":"owner"}}"#, re: 7, .badRequest)
        expectInvalid(#"{"id":7,"op":"attr.set","args":{"room":"r","attrs":{"k":1}}}"#, re: 7, .badRequest)
        expectInvalid(#"{"id":7,"op":"signal.send","args":{"room":"r","to":"all","type":"t"}}"#, re: 7, .badRequest)
        expectInvalid(#"{"id":7,"op":"ping","rid":5}"#, re: 7, .badRequest)
        expectInvalid(#"{"id":7,"op":"hello","args":{}}"#, re: 7, .badRequest)
    }

    @Test func randomBytesNeverTrap() {
        var generator = SystemRandomNumberGenerator()
        let seeds = [#"{"id":1,"op":"seat.take","args":{"room":"r","index":2}}"#, #"{"id":2,"op":"chat.send","args":{"room":"r","text":"hi","clientMsgId":"c"}}"#]
        for _ in 0..<3000 {
            var bytes = Array(seeds.randomElement(using: &generator)!.utf8)
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let position = Int.random(in: 0..<bytes.count, using: &generator)
                bytes[position] = UInt8.random(in: 0...255, using: &generator)
            }
            if Bool.random(using: &generator) { bytes = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &generator))) }
            _ = RequestDecoder.decode(Data(bytes))
        }
    }
}
