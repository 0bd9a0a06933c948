import Foundation
import MajlisForwarding
import MajlisProtocol
import MajlisRoom

/// The answer to a room op, from the engine's reply: what the engine leaves to its host (chat
/// history from the store, the answer to a WebRTC offer, a snapshot's media keys and the seats'
/// SSRCs) is made here. Runs on the room's queue.
struct RoomReplies: Sendable {
    let room: String
    let context: ServerContext

    /// The answer (success or failure, and its encoded body) to `command` from `caller`, whose
    /// engine reply is `reply`; `member`: whether the caller is a member of the room now.
    func answer(_ reply: Result<RoomReply, ProtocolError>, to command: RoomCommand, from caller: Caller, member: Bool) -> (ok: Bool, body: Data) {
        switch reply {
        case .success(.history(let before, let limit)):
            do {
                return (true, WireEncoder.encode(["messages": try context.store.history(room: room, before: before, limit: limit)]))
            } catch {
                return (false, WireEncoder.encode(ProtocolError(.internal, "the server could not read chat history")))
            }
        case .success(.giftLeaders(let since, let until, let limit)):
            do {
                return (true, WireEncoder.encode(try context.store.giftLeaders(room: room, since: since, until: until, limit: limit)))
            } catch {
                return (false, WireEncoder.encode(ProtocolError(.internal, "the server could not read the gift leaderboard")))
            }
        case .success(.webrtcOffer(let sdp, let seats)):
            return negotiate(sdp, seats: seats, user: caller.id)
        case .success(.snapshot(var snapshot)):
            // A join gets new media keys; so does a member that has none on this process: one
            // restored from the store after a restart, or with its room from another node,
            // which only syncs when it comes back.
            var media = context.media.mediaInfo(room: room, user: caller.id)
            if case .join = command { media = nil }
            if media == nil, member {
                context.media.join(room: room, user: caller.id)
                media = context.media.mediaInfo(room: room, user: caller.id)
            }
            snapshot.media = media
            snapshot.seats = withSSRCs(snapshot.seats)
            return (true, WireEncoder.encode(RoomReply.snapshot(snapshot)))
        case .success(let reply):
            return (true, WireEncoder.encode(reply))
        case .failure(let error):
            return (false, WireEncoder.encode(error))
        }
    }

    /// Seats with the SSRC of whoever sits there.
    func withSSRCs(_ seats: [Seat]) -> [Seat] {
        let ssrcs = context.media.ssrcs(room: room, users: seats.compactMap(\.user))
        return seats.map { seat in
            var seat = seat
            seat.ssrc = seat.user.flatMap { ssrcs[$0] }
            return seat
        }
    }

    /// Answers a browser's SDP offer (`webrtc.offer`): the answer, and which track is which seat.
    private func negotiate(_ sdp: String, seats: Int, user: String) -> (ok: Bool, body: Data) {
        struct Answer: Encodable {
            var sdp: String
            var tracks: [WebRTCAnswer.Track]
            var uplink: String?
        }
        let offer: WebRTCOffer
        do {
            // One section for the microphone and one per seat is all a member can use.
            offer = try WebRTCOffer(
                admitting: sdp, op: "webrtc.offer", mostSections: seats + 1, why: "this room takes at most \(seats + 1) (the microphone and one per seat)")
        } catch {
            return (false, WireEncoder.encode(error))
        }
        guard let answer = context.media.negotiate(room: room, user: user, offer: offer, seats: seats) else {
            return (false, WireEncoder.encode(ProtocolError(.internal, "WebRTC media is not available on this server")))
        }
        return (true, WireEncoder.encode(Answer(sdp: answer.sdp, tracks: answer.tracks, uplink: answer.uplink)))
    }
}
