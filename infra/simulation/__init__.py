"""Load simulation: the real game under DynamoDB's behaviour at load, in simulated time.

Run ``python -m infra.simulation --label <label>`` (minutes on 2 cores); it writes the section
``<label>`` of ``infra/simulation/RESULTS.md``: per arrival rate (10 to 2,000 joins/s in one
language), lobby fill time p50/p99, ``try_again`` per 1,000 joins, conflicts per join, the
hottest partition's load against its limit (table and index), tournaments started per second.
``--per-tournament`` writes the requests and units of a tournament played to the end (the
capacity plan's inputs, ``infra/CAPACITY.md``).

Architecture — what is real and what is modelled:

- **Real**: the entrypoints (``functions.connect``, the ``functions.messages`` routes,
  ``functions.apply_deadlines``), the services, the domain, ``DynamoStore`` and its codec, the
  ``Deps`` of ``shared.runtime.bootstrap.build`` (production settings: rate limiter, heartbeat,
  retry policy). None of it knows it is simulated.
- **Modelled** (``dynamo.FakeDynamoClient``): the boto3 DynamoDB client the store calls —
  conditional writes evaluated by a small expression evaluator that refuses anything it does not
  know, transactions and their conflicts, DynamoDB's error shapes, capacity units by DynamoDB's
  rules, a token bucket per partition key (table and each index: 1,000 WCU/s, 3,000 RCU/s),
  eventually consistent indexes with a propagation lag, request latency, and botocore's
  standard-mode retries of throttled calls. Every figure of the report about DynamoDB comes
  from its accounting.
- **Time** (``engine.Sim``): a discrete-event scheduler. Each invocation runs in its own thread,
  but only one thread runs at a time; every DynamoDB call (and post, and retry backoff) waits in
  simulated time, and the scheduler resumes the earliest waiting invocation. Others' commits
  thus land between a read and a conditional write as they would in production, and a seed
  fixes the whole run (same seed, same report).
- **Around the handlers** (``run``): the Step Functions clock as simulated waits that run the
  real clock function at each wake (looping like the state machine); the notifier as a post
  latency per message that delivers each event to its scripted player; scripted players
  arriving as a Poisson process, answering ``try_again`` by joining again, pinging, and (in a
  sample of the tournaments) playing every turn at human pace with the bots' solver.

Not modelled (stated in the report): Lambda cold starts and concurrency limits, API Gateway
throttles, DynamoDB's table-level limits and on-demand scaling, 5xx errors, disconnects.
"""
