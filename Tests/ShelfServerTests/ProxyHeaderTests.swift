import Foundation
import Shelf
import ShelfCore
import ShelfTestSupport
import Testing

@testable import ShelfServer

/// What Shelf believes of a request that came through a reverse proxy: the forwarding headers only
/// from `trusted-proxies`, the right-most untrusted address as the client, and the base path in
/// every link it writes. Handler-level, in-process; `ReverseProxyTests` puts real nginx and Caddy
/// in front.
@Suite struct ProxyHeaderTests {
    static let proxies = TrustedProxies(["127.0.0.1", "10.0.0.0/8", "fd00::/8"].compactMap(IPNetwork.init))

    @Test func networksParseAndMatch() {
        #expect(IPNetwork("10.0.0.0/8")?.contains("10.200.3.4") == true)
        #expect(IPNetwork("10.0.0.0/8")?.contains("11.0.0.1") == false)
        #expect(IPNetwork("192.168.1.77/24")?.contains("192.168.1.3") == true)
        #expect(IPNetwork("127.0.0.1")?.contains("127.0.0.1") == true)
        #expect(IPNetwork("127.0.0.1")?.contains("127.0.0.2") == false)
        #expect(IPNetwork("127.0.0.1")?.contains("::ffff:127.0.0.1") == true, "an IPv4-mapped peer is its IPv4 address")
        #expect(IPNetwork("fd00::/8")?.contains("fd12:3456::1") == true)
        #expect(IPNetwork("fd00::/8")?.contains("fe80::1") == false)
        #expect(IPNetwork("0.0.0.0/0")?.contains("203.0.113.9") == true)
        for bad in ["", "10.0.0.0/33", "fd00::/129", "10.0.0/8", "localhost", "10.0.0.0/x", "1.2.3.4/"] {
            #expect(IPNetwork(bad) == nil, "\(bad)")
        }
    }

    @Test func headersFromAnUntrustedAddressAreIgnored() {
        let forged = ["x-forwarded-for": "1.2.3.4", "x-forwarded-proto": "https", "x-forwarded-host": "evil.example", "host": "music.lan:4040"]
        let client = Self.proxies.client(peer: "192.0.2.7", headers: forged, isTLS: false)
        #expect(client == ForwardedClient(address: "192.0.2.7", scheme: "http", host: "music.lan:4040", proxied: false))
        // With no trusted proxies at all, not even loopback is believed.
        #expect(TrustedProxies().client(peer: "127.0.0.1", headers: forged, isTLS: true).address == "127.0.0.1")
        #expect(TrustedProxies().client(peer: "127.0.0.1", headers: forged, isTLS: true).scheme == "https")
    }

    @Test func theClientIsTheRightMostUntrustedAddress() {
        func client(_ headers: [String: String]) -> ForwardedClient { Self.proxies.client(peer: "127.0.0.1", headers: headers, isTLS: false) }
        // The client wrote 6.6.6.6 itself; the proxy appended what it saw.
        #expect(client(["x-forwarded-for": "6.6.6.6, 203.0.113.5"]).address == "203.0.113.5")
        // Two proxies: the inner one (10.1.1.1, trusted) forwarded the outer one's client.
        #expect(client(["x-forwarded-for": "6.6.6.6, 198.51.100.2, 10.1.1.1"]).address == "198.51.100.2")
        // Everyone trusted: the left-most is the client.
        #expect(client(["x-forwarded-for": "10.0.0.5, 10.1.1.1"]).address == "10.0.0.5")
        // Ports and brackets go.
        #expect(client(["x-forwarded-for": "203.0.113.5:51234"]).address == "203.0.113.5")
        // No header: the proxy itself.
        #expect(client([:]).address == "127.0.0.1" && client([:]).proxied)
        // RFC 7239, preferred over X-Forwarded-For; quoted IPv6 with a port.
        let forwarded = client([
            "forwarded": "for=6.6.6.6, for=\"[2001:db8:cafe::17]:4711\";proto=https;host=\"home.example\"", "x-forwarded-for": "9.9.9.9",
        ])
        #expect(forwarded == ForwardedClient(address: "2001:db8:cafe::17", scheme: "https", host: "home.example", proxied: true))
        let scheme = client(["x-forwarded-proto": "https", "x-forwarded-host": "home.example", "host": "127.0.0.1:4040"])
        #expect(scheme.scheme == "https" && scheme.host == "home.example")
        // A scheme that is neither is not believed.
        #expect(client(["x-forwarded-proto": "gopher"]).scheme == "http")
        #expect(TrustedProxies.forwardedElements("for=a;proto=http, FOR=\"b\\\"c\"") == [["for": "a", "proto": "http"], ["for": "b\"c"]])
    }

    @Test func theBasePathIsServedAndWrittenIntoLinks() async throws {
        let server = try await InProcessServer(tracks: 3) { options in
            options.basePath = "/music"
            options.publicURL = "https://home.example/music"
        }
        let bare = await server.request("GET", "/music")
        #expect(bare.status == 308 && bare.header("Location") == "/music/")
        let page = await server.request("GET", "/music/")
        #expect(page.status == 200 && page.text.contains("href=\"app/app.css\"") && !page.text.contains("\"/app/"))
        // A proxy that strips the base (Caddy's handle_path) reaches the same page and API.
        #expect(await server.request("GET", "/").status == 200)
        #expect(await server.request("GET", "/music/app/app.js").status == 200)
        let worker = await server.request("GET", "/music/sw.js")
        #expect(worker.status == 200 && worker.text.contains("const BASE = '/music';") && worker.text.contains("'/music/app/app.js'"))
        let signIn = await server.request(
            "POST", "/music/api/session", headers: ["content-type": "application/json"],
            body: Data(#"{"name":"ann","password":"ann's secret"}"#.utf8))
        #expect(signIn.status == 200)
        #expect(signIn.header("Set-Cookie")?.contains("Path=/music;") == true, "\(signIn.header("Set-Cookie") ?? "")")
        // Share links carry public-url.
        let share = try await server.subsonicJSON("createShare", [("id", "tr-1")])
        let url = ((share["shares"] as? [String: Any])?["share"] as? [[String: Any]])?.first?["url"] as? String
        #expect(url?.hasPrefix("https://home.example/music/share/") == true, "\(url ?? "none")")
        let token = try #require(url?.split(separator: "/").last.map(String.init))
        let sharePage = await server.request("GET", "/music/share/\(token)")
        #expect(sharePage.status == 200 && sharePage.text.contains("src=\"/music/share/\(token)/stream/0\""), "\(sharePage.text)")
    }

    @Test func withoutAPublicURLLinksFollowTheRequest() async throws {
        let server = try await InProcessServer(tracks: 2) { $0.basePath = "/music" }
        var request = HTTPRequest(method: "GET", path: "/music/rest/createShare", query: [], headers: ["host": "music.lan:8080"])
        request.query = [("u", "ann"), ("p", InProcessServer.annPassword), ("v", "1.16.1"), ("c", "t"), ("f", "json"), ("id", "tr-1")]
        // As the bridge sets them for a trusted proxy's https client.
        request.scheme = "https"
        let answer = await server.server.respond(request)
        let body = await InProcessServer.bytes(of: answer.body)
        #expect(String(decoding: body, as: UTF8.self).contains("https://music.lan:8080/music/share/"))
        // A forged header on a direct request changes nothing: the bridge never set the scheme.
        var direct = HTTPRequest(method: "GET", path: "/music/rest/createShare", headers: ["host": "music.lan", "x-forwarded-proto": "https"])
        direct.query = request.query
        let plain = await InProcessServer.bytes(of: await server.server.respond(direct).body)
        #expect(String(decoding: plain, as: UTF8.self).contains("\"url\":\"http://music.lan/music/share/"))
    }

    @Test func theProxysHeaderSignsInOnlyFromATrustedProxy() async throws {
        let server = try await InProcessServer(tracks: 2) { options in
            options.proxies = Self.proxies
            options.headerSignIn = HeaderSignIn(header: "Remote-User", createUsers: true, adminGroup: "admins")
        }
        func me(_ headers: [String: String], proxied: Bool) async -> (Int, [String: Any]) {
            var request = HTTPRequest(method: "GET", path: "/api/me", headers: headers)
            request.proxied = proxied
            let answer = await server.server.respond(request)
            let body = await InProcessServer.bytes(of: answer.body)
            return (answer.status, (try? JSONSerialization.jsonObject(with: body)) as? [String: Any] ?? [:])
        }
        #expect(await me(["remote-user": "ann"], proxied: false).0 == 401, "a forged header from anywhere else is ignored")
        let ann = await me(["remote-user": "ann"], proxied: true)
        #expect(ann.0 == 200 && (ann.1["user"] as? [String: Any])?["name"] as? String == "ann")
        let carol = await me(["remote-user": "carol", "remote-groups": "family, admins"], proxied: true)
        #expect(carol.0 == 200 && (carol.1["user"] as? [String: Any])?["admin"] as? Bool == true, "\(carol)")
        let dave = await me(["remote-user": "dave", "remote-groups": "family"], proxied: true)
        #expect((dave.1["user"] as? [String: Any])?["admin"] as? Bool == false)
        #expect(try await server.library.user(named: "carol") != nil)
        // A write needs the page's anti-forgery header, as with a cookie.
        var write = HTTPRequest(method: "POST", path: "/api/playlists", headers: ["remote-user": "dave"], body: Data(#"{"name":"x"}"#.utf8))
        write.proxied = true
        #expect(await server.server.respond(write).status == 403)
        write.headers["x-shelf-request"] = "1"
        #expect(await server.server.respond(write).status == 201)
        // The page's own Subsonic calls; an app's call without credentials is still refused.
        var page = HTTPRequest(method: "GET", path: "/rest/ping", query: [("v", "1.16.1"), ("c", "web"), ("f", "json")], headers: ["remote-user": "dave"])
        page.proxied = true
        let appAnswer = await InProcessServer.bytes(of: await server.server.respond(page).body)
        #expect(String(decoding: appAnswer, as: UTF8.self).contains("\"failed\""))
        page.headers["x-shelf-request"] = "1"
        let pageAnswer = await InProcessServer.bytes(of: await server.server.respond(page).body)
        #expect(String(decoding: pageAnswer, as: UTF8.self).contains("\"ok\""), "\(String(decoding: pageAnswer, as: UTF8.self))")
    }

    @Test func anUnknownNameIsRefusedUnlessUsersAreMade() async throws {
        let server = try await InProcessServer(tracks: 2) { options in
            options.proxies = Self.proxies
            options.headerSignIn = HeaderSignIn(header: "X-Auth-User")
        }
        var request = HTTPRequest(method: "GET", path: "/api/me", headers: ["x-auth-user": "mallory"])
        request.proxied = true
        let answer = await server.server.respond(request)
        #expect(answer.status == 401)
        #expect(String(decoding: await InProcessServer.bytes(of: answer.body), as: UTF8.self).contains("auth-header-create-users"))
        #expect(try await server.library.user(named: "mallory") == nil)
    }
}
