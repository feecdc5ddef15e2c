"""Vector backfill service: queue the backfill job whenever exchanges wait for their vectors (or turns
for their words to join the person's vocabulary: services/memory/vocabulary.py, or a large person for their own
vector index: services/memory/person_index.py).

An import queues the backfill itself (services/memory/vectors.py); this catches what that
missed: Redis was unreachable during the import, the embedded servers stopped with the
command, a worker died half-way. The periodic worker loads no model, so it only queues the
job on the memory chunker queue, whose workers embed; a job already queued or running is not
queued twice.
"""

from __future__ import annotations

from services.memory import person_index, vocabulary
from services.memory.config import process_memory_config
from services.memory.vectors import enqueue_backfill, pending_count
from services.service_call import ServiceCall, ServiceResult

IDLE = "no exchange waits for its vector, no turn for its words, no large person for their own vector index"


def run(call: ServiceCall) -> ServiceResult:
    cfg = process_memory_config(call.context.extras, call.context.settings.configs_dir).recall
    with call.context.sessions() as session:
        pending = pending_count(session)
        # Turns whose words recall's expansion lacks (none is needed while the expansion is off).
        words = not pending and cfg.expands and vocabulary.pending(session)
        # A large person without their own vector index (the job builds it once nothing else waits).
        indexes = not pending and not words and bool(person_index.wanted(session, cfg))
    if not pending and not words and not indexes:
        return ServiceResult.skipped(IDLE)
    job_id = enqueue_backfill(call.context.redis)
    if job_id is None:
        return ServiceResult.skipped("the backfill is queued or running already", pending=pending)
    return ServiceResult.ran(pending=pending, job=job_id)
