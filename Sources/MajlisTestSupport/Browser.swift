import Foundation
import MajlisProtocol

#if canImport(Glibc)
import Glibc
#endif

/// Headless Chromium driven over WebDriver (chromedriver's HTTP/JSON), with a fake microphone
/// that plays a WAV file: the browser half of the web app's tests. Every call runs off Swift's
/// shared pool (the HTTP exchange blocks).
public final class Browser: Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    let driver: Process
    let port: Int
    let session: String
    let profile: String

    /// Whether chromium and chromedriver are installed (scripts/install-deps --test installs them).
    public static var isAvailable: Bool {
        ["/usr/bin/chromium", "/usr/bin/chromedriver"].allSatisfy(FileManager.default.isExecutableFile)
    }

    /// Starts chromedriver and a browser of `width` x `height` whose microphone plays
    /// `microphone` (a WAV file), preferring `language`.
    public init(microphone: String?, width: Int = 1280, height: Int = 800, language: String = "en", extraArguments: [String] = []) async throws {
        port = try Self.freePort()
        driver = Process()
        driver.executableURL = URL(fileURLWithPath: "/usr/bin/chromedriver")
        driver.arguments = ["--port=\(port)"]
        driver.standardOutput = FileHandle.nullDevice
        driver.standardError = FileHandle.nullDevice
        try driver.run()
        profile = FileManager.default.temporaryDirectory.appendingPathComponent("majlis-chromium-\(UUID().uuidString)").path
        var arguments = [
            "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--user-data-dir=\(profile)",
            "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream", "--autoplay-policy=no-user-gesture-required",
            "--window-size=\(width),\(height)", "--lang=\(language)",
        ]
        if let microphone { arguments.append("--use-file-for-fake-audio-capture=\(microphone)") }
        arguments += extraArguments
        var options: [String: JSONValue] = ["binary": "/usr/bin/chromium", "args": .array(arguments.map(JSONValue.string)), "prefs": ["intl.accept_languages": .string(language)]]
        if width < 500 {  // narrower than a headless window can be: emulate the phone's screen
            options["mobileEmulation"] = ["deviceMetrics": ["width": .int(Int64(width)), "height": .int(Int64(height)), "pixelRatio": 1, "touch": true]]
        }
        let capabilities: JSONValue = ["capabilities": ["alwaysMatch": ["browserName": "chrome", "goog:chromeOptions": .object(options)]]]
        let port = port
        var answer: JSONValue?
        for _ in 0..<100 {  // chromedriver takes a moment to listen
            answer = await offPool { try? Self.exchange(port: port, method: "POST", path: "/session", body: capabilities) }
            if answer != nil { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        guard let id = answer?["value"]?["sessionId"]?.stringValue else {
            driver.terminate()
            throw Failure(description: "chromedriver made no session: \(String(describing: answer))")
        }
        session = id
    }

    /// Opens `url` and waits for the page to load.
    public func open(_ url: String) async throws {
        _ = try await command("POST", "url", ["url": .string(url)])
    }

    /// Runs `script` (a function body; `arguments` holds `args`) in the page; returns its value.
    @discardableResult
    public func run(_ script: String, _ args: [JSONValue] = []) async throws -> JSONValue {
        try await command("POST", "execute/sync", ["script": .string(script), "args": .array(args)])
    }

    /// Runs `script` until it returns something truthy (every 100 ms, at most `seconds`).
    @discardableResult
    public func wait(for what: String, _ script: String, seconds: Double = 30) async throws -> JSONValue {
        let deadline = Date().addingTimeInterval(seconds)
        // Run once more after the deadline: a task starved past it still sees what the page did.
        while true {
            let value = try await run(script)
            switch value {
            case .null, .bool(false): break
            case .string(let text) where text.isEmpty: break
            default: return value
            }
            if Date() > deadline { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw Failure(description: "waited \(Int(seconds)) s for \(what); the page then: \(await described())")
    }

    /// What the page shows, and the Majlis web app's own log where there is one: said beside a
    /// wait that gave up, so a failure on a busy machine tells what the page was doing.
    func described() async -> String {
        let script = """
            const text = (document.body?.innerText || '').replace(/\\s+/g, ' ').slice(0, 400);
            const page = window.majlis?.page;
            return JSON.stringify({ text, step: page?.step, log: page?.log?.slice(-20) });
            """
        return (try? await run(script).stringValue) ?? "(the page did not answer)"
    }

    /// Clicks the first element matching `selector` once the page shows it (pages draw on the
    /// next animation frame, so an element a click just asked for may not be there yet).
    public func click(_ selector: String, seconds: Double = 30) async throws {
        try await wait(
            for: selector, "const e = document.querySelector(arguments[0]); if (!e) return false; e.click(); return true".replacingOccurrences(of: "arguments[0]", with: Self.quoted(selector)),
            seconds: seconds)
    }

    /// `text` as a JavaScript string literal.
    static func quoted(_ text: String) -> String {
        String(decoding: (try? JSONEncoder().encode(text)) ?? Data("\"\"".utf8), as: UTF8.self)
    }

    /// Sends a Chrome DevTools Protocol command (e.g. `Input.imeSetComposition`) to the page.
    @discardableResult
    public func devTools(_ method: String, _ params: [String: JSONValue]) async throws -> JSONValue {
        try await command("POST", "goog/cdp/execute", ["cmd": .string(method), "params": .object(params)])
    }

    /// A PNG of the window.
    public func screenshot() async throws -> Data {
        guard let text = try await command("GET", "screenshot", nil).stringValue, let data = Data(base64Encoded: text) else {
            throw Failure(description: "no screenshot")
        }
        return data
    }

    /// Runs `body`, then closes `browsers` whether it threw or not.
    public static func closing(_ browsers: [Browser], _ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch {
            for browser in browsers { await browser.quit() }
            throw error
        }
        for browser in browsers { await browser.quit() }
    }

    /// Closes the browser and chromedriver.
    public func quit() async {
        _ = try? await command("DELETE", "", nil)
        driver.terminate()
        for _ in 0..<100 where driver.isAlive { try? await Task.sleep(for: .milliseconds(50)) }
        if driver.isAlive {
            kill(driver.processIdentifier, SIGKILL)
            driver.waitForExit()
        }
        try? FileManager.default.removeItem(atPath: profile)
    }

    private func command(_ method: String, _ name: String, _ body: JSONValue?) async throws -> JSONValue {
        let (port, path) = (port, "/session/\(session)" + (name.isEmpty ? "" : "/\(name)"))
        let answer = try await offPool { Result { try Self.exchange(port: port, method: method, path: path, body: body) } }.get()
        if let error = answer["value"]?["error"]?.stringValue {
            throw Failure(description: "\(error): \(answer["value"]?["message"]?.stringValue?.prefix(300) ?? "")")
        }
        return answer["value"] ?? .null
    }

    /// One HTTP/1.1 request to chromedriver on loopback, read to the end.
    static func exchange(port: Int, method: String, path: String, body: JSONValue?) throws -> JSONValue {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "no socket") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 120, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        guard connected == 0 else { throw Failure(description: "chromedriver is not listening on \(port)") }
        let payload = try body.map { try JSONEncoder().encode($0) } ?? Data()
        var request = Data("\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\nContent-Length: \(payload.count)\r\nConnection: close\r\n\r\n".utf8)
        request.append(payload)
        try request.withUnsafeBytes { bytes in
            var sent = 0
            while sent < bytes.count {
                let count = send(fd, bytes.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
                guard count > 0 else { throw Failure(description: "cannot send to chromedriver") }
                sent += count
            }
        }
        // chromedriver keeps the connection open: read the head, then exactly the body it announces.
        var response = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        func more() throws {
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { throw Failure(description: "chromedriver did not answer \(method) \(path)") }
            response.append(contentsOf: buffer[0..<count])
        }
        while response.range(of: Data("\r\n\r\n".utf8)) == nil { try more() }
        let split = response.range(of: Data("\r\n\r\n".utf8))!
        let head = String(decoding: response[..<split.lowerBound], as: UTF8.self).lowercased()
        let bodyStart = split.upperBound - response.startIndex
        if let line = head.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
            let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
        {
            while response.count - bodyStart < length { try more() }
            return try JSONDecoder().decode(JSONValue.self, from: Data(response[(response.startIndex + bodyStart)..<(response.startIndex + bodyStart + length)]))
        }
        guard head.contains("transfer-encoding: chunked") else { throw Failure(description: "chromedriver's answer has no length") }
        while response.range(of: Data("\r\n0\r\n\r\n".utf8)) == nil { try more() }
        return try JSONDecoder().decode(JSONValue.self, from: dechunk(Data(response[(response.startIndex + bodyStart)...])))
    }

    static func dechunk(_ data: Data) -> Data {
        var out = Data()
        var rest = data[...]
        while let line = rest.range(of: Data("\r\n".utf8)) {
            let size = Int(String(decoding: rest[..<line.lowerBound], as: UTF8.self), radix: 16) ?? 0
            if size == 0 { break }
            let start = line.upperBound
            out.append(rest[start..<min(rest.endIndex, start + size)])
            rest = rest[min(rest.endIndex, start + size + 2)...]
        }
        return out
    }

    /// A TCP port nothing listens on now.
    public static func freePort() throws -> Int { try LoopbackSocket.freePort() }
}
