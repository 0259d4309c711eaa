package io.prwrelay.server.downstream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** relay.downstream.max-connections is split over the event loops without exceeding it. */
class ConnectionShareTest {
  @Test
  void sharesAddUpToTheConfiguredMaximum() {
    for (int loops = 1; loops <= 16; loops++) {
      for (int max = loops; max <= 200; max++) {
        int total = 0;
        for (int i = 0; i < loops; i++) {
          int share = DownstreamClient.share(max, loops, i);
          assertTrue(share >= 1);
          total += share;
        }
        assertEquals(max, total, max + " connections over " + loops + " loops");
      }
    }
    assertEquals(33, DownstreamClient.share(65, 2, 0));
    assertEquals(32, DownstreamClient.share(65, 2, 1));
  }

  @Test
  void everyLoopGetsAConnectionEvenBelowOnePerLoop() {
    assertEquals(1, DownstreamClient.share(2, 4, 3));
  }
}
