package com.example.orders;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * Two endpoints as a team writes them: GET /orders waits 50 ms in PostgreSQL on a pooled
 * connection (HikariCP, held by a Tomcat thread throughout), GET /digest computes (SHA-256
 * chained {@code rounds} times) and touches nothing else.
 */
@SpringBootApplication
@RestController
public class OrdersApplication {

    private final JdbcTemplate jdbc;

    OrdersApplication(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @GetMapping("/orders")
    public String orders() {
        jdbc.execute("select pg_sleep(0.05)");
        return "ok";
    }

    @GetMapping("/digest")
    public String digest(@RequestParam(defaultValue = "20000") int rounds)
            throws NoSuchAlgorithmException {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        byte[] h = "orders".getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < rounds; i++) {
            h = sha.digest(h);
        }
        return HexFormat.of().formatHex(h);
    }

    public static void main(String[] args) {
        SpringApplication.run(OrdersApplication.class, args);
    }
}
