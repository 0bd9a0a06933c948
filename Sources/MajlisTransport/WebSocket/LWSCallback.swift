import CLibWebSockets
import CWebSocketsShim
import Foundation

/// The one libwebsockets protocol callback, for servers and clients alike.
func majlisWebSocketCallback(
    wsi: OpaquePointer?, reason: lws_callback_reasons, user: UnsafeMutableRawPointer?,
    input: UnsafeMutableRawPointer?, length: Int
) -> Int32 {
    guard let wsi else { return 0 }
    let contextUser = lws_context_user(lws_get_context(wsi))
    guard let contextUser else { return 0 }
    let loop = Unmanaged<ServiceLoop>.fromOpaque(contextUser).takeUnretainedValue()
    func connection() -> WebSocketConnection? {
        guard let opaque = lws_get_opaque_user_data(wsi) else { return nil }
        return Unmanaged<WebSocketConnection>.fromOpaque(opaque).takeUnretainedValue()
    }

    switch reason {
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
        loop.drainPending()
        return 0

    // Server side.
    case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
        // Out of descriptors but a reserve: hang up before any work (`input` is the socket).
        let ceiling = majlis_lws_fd_ceiling()
        return ceiling > 0 && Int(bitPattern: input) >= ceiling ? 1 : 0
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
        var uri = [CChar](repeating: 0, count: 256)
        let count = lws_hdr_copy(wsi, &uri, Int32(uri.count), WSI_TOKEN_GET_URI)
        let path = count > 0 ? cString(uri) : ""
        return path == "/v1/signal" ? 0 : 1
    case LWS_CALLBACK_ESTABLISHED:
        var address = [CChar](repeating: 0, count: 64)
        lws_get_peer_simple(wsi, &address, address.count)
        let connection = WebSocketConnection(
            id: ServiceLoop.makeConnectionId(), peer: cString(address), loop: loop, delegate: loop.serverDelegate)
        connection.wsi = wsi
        connection.established = true
        lws_set_opaque_user_data(wsi, Unmanaged.passRetained(connection).toOpaque())
        connection.delegate?.webSocketDidOpen(connection)
        return 0
    case LWS_CALLBACK_HTTP:
        var path = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "/"
        var query = [CChar](repeating: 0, count: 2_048)
        if majlis_lws_http_query(wsi, &query, Int32(query.count)) > 0 { path += "?" + cString(query) }
        let response = loop.httpHandler?(path) ?? HTTPResponse(status: 404, body: Array(#"{"error":"not found"}"#.utf8))
        let result = response.body.withUnsafeBufferPointer { body in
            majlis_lws_http_respond(wsi, response.status, response.contentType, body.baseAddress, body.count)
        }
        return result != 0 ? -1 : 0

    // Client side.
    case LWS_CALLBACK_CLIENT_ESTABLISHED:
        guard let connection = connection() else { return -1 }
        connection.wsi = wsi
        connection.established = true
        connection.delegate?.webSocketDidOpen(connection)
        lws_callback_on_writable(wsi)
        return 0
    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
        guard let opaque = lws_get_opaque_user_data(wsi) else { return 0 }
        lws_set_opaque_user_data(wsi, nil)
        let connection = Unmanaged<WebSocketConnection>.fromOpaque(opaque).takeRetainedValue()
        let message = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "connection failed"
        loop.closed(connection, code: nil, reason: message)
        return 0

    // Both.
    case LWS_CALLBACK_RECEIVE, LWS_CALLBACK_CLIENT_RECEIVE:
        guard let connection = connection() else { return -1 }
        return loop.receive(connection, wsi: wsi, bytes: input, length: length)
    case LWS_CALLBACK_RECEIVE_PONG, LWS_CALLBACK_CLIENT_RECEIVE_PONG:
        connection()?.touch()
        return 0
    case LWS_CALLBACK_SERVER_WRITEABLE, LWS_CALLBACK_CLIENT_WRITEABLE:
        guard let connection = connection() else { return -1 }
        return loop.flush(connection, wsi: wsi, inOwnCallback: true)
    case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
        guard let connection = connection() else { return 0 }
        if let input, length >= 2 {
            let bytes = input.assumingMemoryBound(to: UInt8.self)
            let code = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
            let text = String(decoding: UnsafeBufferPointer(start: bytes + 2, count: length - 2), as: UTF8.self)
            connection.state.withLock { state in
                if state.closeRequest == nil { state.closeRequest = (code, text) }
            }
        }
        return 0
    case LWS_CALLBACK_CLOSED, LWS_CALLBACK_CLIENT_CLOSED:
        guard let opaque = lws_get_opaque_user_data(wsi) else { return 0 }
        lws_set_opaque_user_data(wsi, nil)
        let connection = Unmanaged<WebSocketConnection>.fromOpaque(opaque).takeRetainedValue()
        let request = connection.state.withLock { $0.closeRequest }
        loop.closed(connection, code: request?.code, reason: request?.reason ?? "closed")
        return 0
    default:
        return lws_callback_http_dummy(wsi, reason, user, input, length)
    }
}

/// The text of a NUL-terminated buffer.
func cString(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
