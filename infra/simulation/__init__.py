"""Load simulation: the real game under DynamoDB's behaviour at load, in simulated time.

Run ``python -m infra.simulation --label <label>`` (minutes on 2 cores); it writes the section
``<label>`` of ``infra/simulation/RESULTS.md`` (per arrival rate, 10 to 2,000 joins/s in one
language: fill time, ``try_again``, conflicts, hottest partition, tournaments started).
``--per-tournament`` writes the requests and units of a tournament played to the end (the
capacity plan's inputs, ``infra/CAPACITY.md``); ``python -m infra.simulation.boards`` charges
the leaderboards' writes at the plan's peak (issue 38). The entrypoints, services, domain and
store are real; DynamoDB (``infra.simulation.dynamo``), time (``infra.simulation.engine``), the
clock, the notifier and the players are modelled: ``shared/domain/RULINGS.md``, design notes,
"The load simulation's model".
"""
