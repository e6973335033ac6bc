import CCrypto
import Foundation
import Shelf
import ShelfCore

/// Where scrobbles go and with which keys (`listenbrainz-url`, `lastfm-url`, `lastfm-api-key`,
/// `lastfm-secret`), and how patiently a queue is retried.
public struct ScrobbleSettings: Sendable, Equatable {
    public var listenbrainzURL = "https://api.listenbrainz.org"
    public var lastfmURL = "https://ws.audioscrobbler.com/2.0"
    public var lastfmAPIKey: String?
    public var lastfmSecret: String?
    /// The first retry's wait after a failure; each failure doubles it up to `retryMax` (seconds).
    public var retryMin: Double = 30
    public var retryMax: Double = 3_600
    /// The most listens in one ListenBrainz request.
    public var batch = 50

    /// The defaults.
    public init() {}

    /// Where a user authorises Shelf at Last.fm (the web flow): Last.fm's own page for the real
    /// API, `<lastfm-url>/auth/` for a compatible server.
    public var lastfmAuthPage: String {
        lastfmURL.hasPrefix("https://ws.audioscrobbler.com") ? "https://www.last.fm/api/auth/" : lastfmURL + "/auth/"
    }
}

/// A service's answer to a link or a send, in words for the user.
public struct ScrobbleError: Error, Sendable, CustomStringConvertible {
    public let message: String
    /// The service refused the credentials themselves (a wrong or revoked token), not the moment.
    public let refusedCredentials: Bool
    public var description: String { message }
}

/// How a send went.
enum SendOutcome: Sendable, Equatable {
    /// The service has the listens.
    case sent
    /// Try again later; `answered` is false when the service may have stored some of them (no
    /// answer came, or it failed midway), so they are sent again one a request.
    case retry(String, answered: Bool)
    /// The credentials were refused for good: the queue pauses.
    case credentials(String)
    /// This one listen was refused for good (its data): it is set aside and the queue goes on.
    case listen(String)
}

/// The HTTP both services are reached by: libcurl, bounded, loopback allowed (the operator names
/// the URLs; a ListenBrainz-compatible server is often on the same machine).
enum ScrobbleHTTP {
    static let agent = "Shelf/\(EngineVersions.version) (scrobbling)"

    static func send(_ url: String, body: Data?, headers: [String]) async -> Result<Fetcher.Answer, FetchError> {
        var limits = FetchLimits(maxBytes: 1 << 20)
        limits.timeoutSeconds = 30
        limits.connectTimeoutSeconds = 10
        limits.stallSeconds = 20
        limits.allowPrivate = true
        let fixed = limits
        return await Fetcher.run { Fetcher.send(url, body: body, headers: headers, limits: fixed, agent: agent) }
    }

    static func json(_ data: Data) -> [String: Any]? { (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] }
}

/// ListenBrainz's API (`POST /1/submit-listens`, `GET /1/validate-token`), as ListenBrainz and
/// compatible servers such as Maloja answer it.
struct ListenBrainzClient: Sendable {
    var base: String

    /// Submits listens in one request (`single` for one, `import` for more).
    func submit(_ listens: [Listen], token: String) async -> SendOutcome {
        let document: [String: Any] = ["listen_type": listens.count == 1 ? "single" : "import", "payload": listens.map { ListenExport.listenBrainzObject($0) }]
        return Self.outcome(await post(document, token: token))
    }

    /// Says what is playing now; best effort, nothing stored or retried.
    func playingNow(_ listen: Listen, token: String) async {
        _ = await post(["listen_type": "playing_now", "payload": [ListenExport.listenBrainzObject(listen, playingNow: true)]], token: token)
    }

    /// The account a token belongs to, or why it is refused.
    func validate(token: String) async -> Result<String, ScrobbleError> {
        switch await ScrobbleHTTP.send(base + "/1/validate-token", body: nil, headers: ["Authorization: Token \(token)"]) {
        case .failure(let error): return .failure(ScrobbleError(message: "ListenBrainz at \(base) did not answer: \(error)", refusedCredentials: false))
        case .success(let answer):
            let json = ScrobbleHTTP.json(answer.body)
            if answer.status == 200, json?["valid"] as? Bool != false { return .success(json?["user_name"] as? String ?? "") }
            let reason = json?["message"] as? String ?? json?["error"] as? String ?? "HTTP \(answer.status)"
            return .failure(ScrobbleError(message: "ListenBrainz refused the token: \(reason)", refusedCredentials: answer.status < 500))
        }
    }

    private func post(_ document: [String: Any], token: String) async -> Result<Fetcher.Answer, FetchError> {
        let body = (try? JSONSerialization.data(withJSONObject: document)) ?? Data()
        return await ScrobbleHTTP.send(
            base + "/1/submit-listens", body: body, headers: ["Authorization: Token \(token)", "Content-Type: application/json"])
    }

    static func outcome(_ result: Result<Fetcher.Answer, FetchError>) -> SendOutcome {
        switch result {
        case .failure(let error): return .retry("no answer: \(error)", answered: false)
        case .success(let answer):
            let json = ScrobbleHTTP.json(answer.body)
            let reason = "HTTP \(answer.status)" + ((json?["error"] as? String).map { ": \($0)" } ?? "")
            switch answer.status {
            case 200..<300: return .sent
            case 401, 403: return .credentials("ListenBrainz refused the token (\(reason))")
            case 429: return .retry(reason, answered: true)
            case 400..<500: return .listen(reason)
            default: return .retry(reason, answered: false)
            }
        }
    }
}

/// Last.fm's API (Audioscrobbler 2.0), every call signed with the operator's secret.
struct LastfmClient: Sendable {
    var base: String
    var apiKey: String
    var secret: String

    /// The signature Last.fm documents: every parameter but `format` and `callback`, sorted by
    /// name, each name followed by its value, then the secret, as the hex MD5 of the UTF-8 bytes.
    static func signature(_ parameters: [String: String], secret: String) -> String {
        let text =
            parameters.filter { $0.key != "format" && $0.key != "callback" }.sorted { $0.key < $1.key }
            .map { $0.key + $0.value }.joined() + secret
        let input = Array(text.utf8)
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        guard EVP_Digest(input, input.count, &digest, &length, EVP_md5(), nil) == 1 else { return "" }
        return digest.prefix(Int(length)).map { String(format: "%02x", $0) }.joined()
    }

    /// A signed call as a form POST; answers the JSON document, or nil with the transport's error.
    func call(_ method: String, _ parameters: [String: String]) async -> Result<(status: Int, json: [String: Any]?), FetchError> {
        var all = parameters
        all["method"] = method
        all["api_key"] = apiKey
        all["api_sig"] = Self.signature(all, secret: secret)
        all["format"] = "json"
        let body = Data(all.sorted { $0.key < $1.key }.map { "\(Self.encode($0.key))=\(Self.encode($0.value))" }.joined(separator: "&").utf8)
        let result = await ScrobbleHTTP.send(base + "/", body: body, headers: ["Content-Type: application/x-www-form-urlencoded"])
        return result.map { (status: $0.status, json: ScrobbleHTTP.json($0.body)) }
    }

    static func encode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    /// A session key for a user name and password (`auth.getMobileSession`).
    func mobileSession(username: String, password: String) async -> Result<(name: String, key: String), ScrobbleError> {
        session(await call("auth.getMobileSession", ["username": username, "password": password]))
    }

    /// A session key for a token the user authorised at Last.fm (`auth.getSession`, the web flow).
    func webSession(token: String) async -> Result<(name: String, key: String), ScrobbleError> {
        session(await call("auth.getSession", ["token": token]))
    }

    private func session(_ result: Result<(status: Int, json: [String: Any]?), FetchError>) -> Result<(name: String, key: String), ScrobbleError> {
        switch result {
        case .failure(let error): return .failure(ScrobbleError(message: "Last.fm at \(base) did not answer: \(error)", refusedCredentials: false))
        case .success(let answer):
            if let session = answer.json?["session"] as? [String: Any], let key = session["key"] as? String, !key.isEmpty {
                return .success((session["name"] as? String ?? "", key))
            }
            let message = answer.json?["message"] as? String ?? "HTTP \(answer.status)"
            return .failure(ScrobbleError(message: "Last.fm refused: \(message)", refusedCredentials: true))
        }
    }

    /// The parameters of one scrobble (the single form, which every compatible server takes).
    static func trackParameters(_ listen: Listen) -> [String: String] {
        var p = ["artist": listen.artist, "track": listen.title]
        if !listen.album.isEmpty { p["album"] = listen.album }
        if !listen.albumArtist.isEmpty, listen.albumArtist != listen.artist { p["albumArtist"] = listen.albumArtist }
        if let duration = listen.duration, duration > 0 { p["duration"] = String(Int(duration.rounded())) }
        if let mbid = listen.recordingMBID { p["mbid"] = mbid }
        return p
    }

    /// Scrobbles one listen with its own time. A listen sent before whose answer never came
    /// (`uncertain`) and that is now refused as a failed operation is taken as already there:
    /// Last.fm drops a second scrobble of the same second and Maloja refuses it so.
    func scrobble(_ listen: Listen, sessionKey: String, uncertain: Bool) async -> SendOutcome {
        var p = Self.trackParameters(listen)
        p["timestamp"] = String(Int(listen.playedAt.timeIntervalSince1970))
        p["sk"] = sessionKey
        switch await call("track.scrobble", p) {
        case .failure(let error): return .retry("no answer: \(error)", answered: false)
        case .success(let answer):
            guard let code = answer.json?["error"] as? Int else {
                if answer.json?["scrobbles"] != nil || (200..<300).contains(answer.status) { return .sent }
                return .retry("HTTP \(answer.status)", answered: false)
            }
            let reason = "Last.fm error \(code): \(answer.json?["message"] as? String ?? "")"
            switch code {
            case 4, 9, 10, 13, 14, 17, 26: return .credentials(reason)
            case 6, 7: return .listen(reason)
            case 8 where uncertain: return .sent
            case 11, 16, 29: return .retry(reason, answered: true)
            default: return .retry(reason, answered: false)
            }
        }
    }

    /// Says what is playing now; best effort.
    func nowPlaying(_ listen: Listen, sessionKey: String) async {
        var p = Self.trackParameters(listen)
        p["sk"] = sessionKey
        _ = await call("track.updateNowPlaying", p)
    }
}
