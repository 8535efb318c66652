// The shared vectors, checked by ./test:
//   steps FILE                      every case of vectors/steps.json against StepsParser
//   contract FILE URL MODEL [http]  every case of vectors/contract.json against a running target
//                                   ("http": the target has the delay service; pg and mc it never has)
// One line per failure on stderr; exit 0 only if every case passes.
package iolab.play.check;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import iolab.play.Step;
import iolab.play.StepsParser;
import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

public final class Vectors {
    private Vectors() {}

    private static final ObjectMapper JSON = new ObjectMapper();

    public static void main(String[] args) throws Exception {
        List<String> failures = switch (args.length > 0 ? args[0] : "") {
            case "steps" -> steps(JSON.readTree(new File(args[1])));
            case "contract" -> contract(JSON.readTree(new File(args[1])), args[2], args[3],
                    args.length > 4 ? Set.of(args[4].split(",")) : Set.of());
            default -> throw new IllegalArgumentException("usage: Vectors steps FILE | contract FILE URL MODEL [http]");
        };
        failures.forEach(f -> System.err.println("FAIL " + f));
        System.exit(failures.isEmpty() ? 0 : 1);
    }

    static List<String> steps(JsonNode doc) {
        List<String> failures = new ArrayList<>();
        for (JsonNode c : doc.get("cases")) {
            String input = c.get("input").asText();
            try {
                Step step = StepsParser.parse(input);
                if (c.has("error")) {
                    failures.add("steps '" + input + "': parsed as " + step.canonical() + ", expected error " + c.get("error"));
                } else if (!step.canonical().equals(c.get("canonical").asText()) || step.leafCount() != c.get("leaves").asInt()) {
                    failures.add("steps '" + input + "': got " + step.canonical() + " (" + step.leafCount() + " leaves), expected "
                            + c.get("canonical") + " (" + c.get("leaves") + ")");
                }
            } catch (StepsParser.StepsError e) {
                if (!c.has("error") || !e.getMessage().equals(c.get("error").asText())) {
                    failures.add("steps '" + input + "': error '" + e.getMessage() + "', expected " + (c.has("error") ? c.get("error") : c.get("canonical")));
                }
            }
        }
        return failures;
    }

    static List<String> contract(JsonNode doc, String base, String model, Set<String> backends) throws Exception {
        List<String> failures = new ArrayList<>();
        try (HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build()) {
            for (JsonNode c : doc.get("cases")) {
                String name = c.get("name").asText();
                JsonNode needs = c.get("needs");
                JsonNode expect = needs == null || backends.contains(needs.asText()) ? c.get("expect") : c.get("unconfigured");
                if (expect == null) continue; // a backend case with no answer listed for a configured target
                HttpRequest req = HttpRequest.newBuilder(URI.create(base + c.get("path").asText())).timeout(Duration.ofSeconds(10)).build();
                long t0 = System.nanoTime();
                HttpResponse<String> resp = client.send(req, HttpResponse.BodyHandlers.ofString());
                double ms = (System.nanoTime() - t0) / 1e6;
                String fault = judge(expect, resp, ms, model);
                if (fault != null) failures.add("contract " + name + ": " + fault);
            }
        }
        return failures;
    }

    /** Why the answer does not match {@code expect}, or null. */
    private static String judge(JsonNode expect, HttpResponse<String> resp, double ms, String model) throws Exception {
        String body = resp.body();
        if (resp.statusCode() != expect.get("status").asInt()) return "status " + resp.statusCode() + ", expected " + expect.get("status") + ": " + body;
        if (expect.has("content_type")) {
            String ct = resp.headers().firstValue("content-type").orElse("");
            if (!ct.startsWith(expect.get("content_type").asText())) return "content-type '" + ct + "', expected " + expect.get("content_type");
        }
        if (expect.has("body")) {
            JsonNode got = JSON.readTree(body);
            for (Map.Entry<String, JsonNode> f : (Iterable<Map.Entry<String, JsonNode>>) expect.get("body")::fields) {
                JsonNode want = f.getValue().asText().equals("$model") ? JSON.valueToTree(model) : f.getValue();
                if (!want.equals(got.get(f.getKey()))) return "field " + f.getKey() + " is " + got.get(f.getKey()) + ", expected " + want + ": " + body;
            }
        }
        if (expect.has("body_contains")) {
            for (JsonNode needle : expect.get("body_contains")) {
                if (!body.contains(needle.asText())) return "body lacks " + needle + ": " + body;
            }
        }
        if (expect.has("min_ms") && ms < expect.get("min_ms").asDouble()) return String.format("took %.1f ms, at least %s expected", ms, expect.get("min_ms"));
        if (expect.has("max_ms") && ms > expect.get("max_ms").asDouble()) return String.format("took %.1f ms, at most %s expected", ms, expect.get("max_ms"));
        return null;
    }
}
