import Foundation
import MajlisProtocol
import MajlisServer
import MajlisTestSupport
import Testing

/// Rooms not in memory are loaded and created off the service thread: requests made meanwhile
/// keep their order, and a room is only ever loaded once however many ask for it at once.
@Suite struct RoomLoadingTests {
    /// A data directory whose store holds room `id` (two seats, owner `owner`), made by a server
    /// that has stopped.
    static func dataWithRoom(_ id: String) async throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-loading-\(UUID().uuidString)").path
        let first = try TestServer(dataDirectory: directory)
        let owner = try await TestClient.signedIn(first, user: "owner")
        try await owner.call("room.create", room: id, ["seatCount": 2])
        first.stop()
        return directory
    }

    @Test func requestsForARoomBeingLoadedKeepTheirOrder() async throws {
        let directory = try await Self.dataWithRoom("cold")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A new server on the same data: the room is only in the store.
        let server = try TestServer(dataDirectory: directory)
        defer { server.stop() }
        #expect(server.server.loadedRooms == 0)
        let client = try await TestClient.signedIn(server, user: "a")
        client.sendRaw(#"{"id":101,"op":"room.join","args":{"room":"cold"}}"#)
        client.sendRaw(#"{"id":102,"op":"chat.send","args":{"room":"cold","text":"first","clientMsgId":"x1"}}"#)
        client.sendRaw(#"{"id":103,"op":"seat.take","args":{"room":"cold","index":1}}"#)
        client.sendRaw(#"{"id":104,"op":"chat.send","args":{"room":"nowhere","text":"lost","clientMsgId":"x2"}}"#)
        for id: Int64 in [101, 102, 103] { #expect(try await client.response(to: id)["ok"] == true, "\(id)") }
        #expect(try await client.response(to: 104)["error"]?["code"] == "room_not_found")
        let history = try await client.call("chat.history", room: "cold")
        #expect(history["messages"]?.arrayValue?.first?["text"] == "first")
        #expect(server.server.loadedRooms == 1)
    }

    @Test func aRoomManyAskForAtOnceIsLoadedOnce() async throws {
        let directory = try await Self.dataWithRoom("stored")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let server = try TestServer(dataDirectory: directory)
        defer { server.stop() }
        let clients = try await withThrowingTaskGroup(of: TestClient.self) { group in
            for index in 0..<24 { group.addTask { try await TestClient.signedIn(server, user: "u\(index)") } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        // Half join the stored room, half create-or-join a new one, all at once.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, client) in clients.enumerated() {
                group.addTask {
                    if index % 2 == 0 {
                        try await client.call("room.join", room: "stored")
                    } else {
                        try await client.call("room.join", room: "fresh", ["create": ["seatCount": 3]])
                    }
                }
            }
            try await group.waitForAll()
        }
        // One room each: everyone who joined is in it.
        #expect(try await ServerAPITests.call(server, "GET", "/v1/rooms/stored").body["room"]?["memberCount"] == 12)
        #expect(try await ServerAPITests.call(server, "GET", "/v1/rooms/fresh").body["room"]?["memberCount"] == 12)
        #expect(server.server.loadedRooms == 2)
    }
}
